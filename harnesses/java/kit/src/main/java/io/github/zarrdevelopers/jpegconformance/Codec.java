package io.github.zarrdevelopers.jpegconformance;

import java.io.IOException;
import java.util.List;
import java.util.Map;

/**
 * A codec under test, with {@code H} what a parsed configuration is to it. {@link Harness#run}
 * serves it over the protocol.
 *
 * <p>A {@link Rejection} is a clean refusal ({@code rejected}), and so is an IOException (how
 * ImageIO and most Java libraries refuse a stream or an image). Anything else thrown is a
 * failure ({@code error}); the session goes on.
 */
public interface Codec<H> {
    /** The {@code --impl} name: letters, digits and {@code ._+-}. */
    String name();

    /** The implementation's version. */
    String version();

    /** The libraries and runtime it uses, for reports. */
    Map<String, String> versions();

    /** {@code "codec"}, or {@code "library"} for a JPEG library called as a codec author would. */
    default String kind() {
        return "codec";
    }

    /** {@code encode}, {@code decode}, and {@code build} with {@link #build}. */
    default List<String> roles() {
        return List.of("encode", "decode");
    }

    /** The codec built from a codec object: any JSON value (objects are maps, numbers BigDecimal, null {@link #isNull}). */
    H parse(Object codec) throws Rejection, IOException;

    /** A JPEG stream of one chunk, of any shape and dtype a request names. */
    byte[] encode(H handle, Chunk chunk) throws Rejection, IOException;

    /** The uint8 samples of {@code stream} in C order, exactly as many as {@code shape} holds. */
    byte[] decode(H handle, byte[] stream, int[] shape) throws Rejection, IOException;

    /** The codec object a builder writes for constructor {@code options} (role {@code build} only). */
    default Object build(Map<String, Object> options) throws Rejection {
        throw new Rejection(null, "this implementation does not build codec objects");
    }

    /** Whether a parsed JSON value is {@code null}. */
    static boolean isNull(Object value) {
        return value == Json.NULL;
    }

    /** A chunk as a request carries it: shape, zarr v3 dtype name, samples in C order, little-endian. */
    record Chunk(int[] shape, String dtype, byte[] data) {
    }
}
