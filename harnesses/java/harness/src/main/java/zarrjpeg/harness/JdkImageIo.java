package zarrjpeg.harness;

/**
 * The JDK's own javax.imageio JPEG plugin (com.sun.imageio.plugins.jpeg, over the IJG libjpeg
 * 6b bundled in the JDK): part of the runtime, so its version is the runtime's.
 */
final class JdkImageIo extends ImageIoJpeg {
    JdkImageIo() {
        super("java-imageio", "com.sun.imageio.plugins.jpeg.");
    }
}
