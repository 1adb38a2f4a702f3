package zarrjpeg.harness;

import java.io.IOException;
import java.util.Map;

/**
 * One JPEG library as a Zarr codec in Java would call it. The harness has already parsed the
 * configuration and checked the chunk's dtype and shape; what happens to pixels and streams
 * is the library's.
 *
 * <p>An IOException (ImageIO's IIOException among them) is the library refusing: the harness
 * replies {@code rejected}. A {@link Rejection} is the codec refusing what the library cannot
 * do. Anything else thrown is a failure: {@code error}.
 */
interface JpegLibrary {
    /** The harness name: the row of the matrix. */
    String name();

    /** Library and runtime versions, read from the build. */
    Map<String, String> versions();

    /** A JPEG stream of {@code height x width x components} uint8 samples in C order. */
    byte[] encode(Config config, byte[] samples, int height, int width, int components) throws Rejection, IOException;

    /** The samples of {@code stream} in C order, exactly {@code height x width x components} of them. */
    byte[] decode(Config config, byte[] stream, int height, int width, int components) throws Rejection, IOException;
}
