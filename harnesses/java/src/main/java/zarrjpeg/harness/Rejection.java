package zarrjpeg.harness;

/** A clean refusal: the protocol's {@code rejected} reply, with the requirement it rests on. */
final class Rejection extends Exception {
    private static final long serialVersionUID = 1L;

    /** The requirement ID (e.g. JPEG-Q-01), or null. */
    final String requirement;
    /** The exception name shown in the reply. */
    final String exception;

    Rejection(String requirement, String message) {
        this(requirement, message, "Rejection");
    }

    Rejection(String requirement, String message, String exception) {
        super(message);
        this.requirement = requirement;
        this.exception = exception;
    }
}
