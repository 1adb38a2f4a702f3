package io.github.zarrdevelopers.jpegconformance;

/**
 * A clean refusal: the protocol's {@code rejected} reply. Throw it for every input the codec
 * does not accept, whatever the reason; {@link #requirement} is shown in messages and never
 * decides a verdict.
 */
public final class Rejection extends Exception {
    private static final long serialVersionUID = 1L;

    /** The requirement ID (e.g. JPEG-Q-01), or null. */
    public final String requirement;
    /** The exception name shown in the reply. */
    public final String exception;

    public Rejection(String requirement, String message) {
        this(requirement, message, "Rejection");
    }

    public Rejection(String requirement, String message, String exception) {
        super(message);
        this.requirement = requirement;
        this.exception = exception;
    }
}
