package io.github.zarrdevelopers.jpegconformance;

import java.io.IOException;
import java.util.Map;

/**
 * One JPEG library as a Zarr codec in Java would call it, behind the spec's parse rules and
 * chunk-shape table ({@link Harness#specParse}): the configuration is parsed and the chunk's
 * dtype and shape checked before it is called; what happens to pixels and streams is its own.
 */
public interface Library {
    /** The harness name: the row of the matrix. */
    String name();

    /** The harness's version. */
    String version();

    /** Library and runtime versions, read from the build. */
    Map<String, String> versions();

    /** Refuse, when parsing, a valid configuration the library cannot honor (an optional feature). */
    default void accepts(Config config) throws Rejection {
    }

    /** A JPEG stream of {@code height x width x components} uint8 samples in C order. */
    byte[] encode(Config config, byte[] samples, int height, int width, int components) throws Rejection, IOException;

    /** The samples of {@code stream} in C order, exactly {@code height x width x components} of them. */
    byte[] decode(Config config, byte[] stream, int height, int width, int components) throws Rejection, IOException;
}
