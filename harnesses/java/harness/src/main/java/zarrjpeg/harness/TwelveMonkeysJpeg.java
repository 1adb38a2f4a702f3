package zarrjpeg.harness;

import java.io.IOException;
import java.io.InputStream;
import java.util.Map;
import java.util.Properties;

/**
 * TwelveMonkeys ImageIO's JPEG plugin (com.twelvemonkeys.imageio.plugins.jpeg), which a Java
 * application gets from ImageIO as soon as the jar is on its class path. Its reader parses the
 * stream itself (CMYK, YCCK, broken APPn segments, lossless) and hands the entropy decoding to
 * the JDK's reader; its writer wraps the JDK's writer.
 */
final class TwelveMonkeysJpeg extends ImageIoJpeg {
    TwelveMonkeysJpeg() {
        super("java-twelvemonkeys", "com.twelvemonkeys.imageio.plugins.jpeg.");
    }

    @Override
    public Map<String, String> versions() {
        Map<String, String> versions = super.versions();
        versions.put("twelvemonkeys imageio-jpeg", artifactVersion("com.twelvemonkeys.imageio", "imageio-jpeg"));
        return versions;
    }

    /** The version Maven resolved, from the pom.properties each artifact carries into the jar. */
    static String artifactVersion(String group, String artifact) {
        String path = "/META-INF/maven/" + group + "/" + artifact + "/pom.properties";
        try (InputStream in = TwelveMonkeysJpeg.class.getResourceAsStream(path)) {
            if (in == null) {
                throw new IllegalStateException(path + " is not in the harness jar");
            }
            Properties properties = new Properties();
            properties.load(in);
            return properties.getProperty("version");
        } catch (IOException ex) {
            throw new IllegalStateException("cannot read " + path + ": " + ex.getMessage(), ex);
        }
    }
}
