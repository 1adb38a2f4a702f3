package zarrjpeg.harness;

import io.github.zarrdevelopers.jpegconformance.Harness;
import io.github.zarrdevelopers.jpegconformance.Library;
import java.io.IOException;

/**
 * Harnesses of zarr-jpeg-conformance for Java JPEG libraries, on the harness kit
 * (io.github.zarr-developers:zarr-jpeg-conformance-harness), which speaks the protocol and
 * applies the spec's parse rules and chunk-shape table: this harness only picks the library.
 *
 * <pre>java [JVM flags] -jar zarr-jpeg-harness.jar imageio|twelvemonkeys</pre>
 */
public final class Main {
    private Main() {
    }

    public static void main(String[] args) throws IOException {
        String usage = "usage: java -jar zarr-jpeg-harness.jar imageio|twelvemonkeys";
        if (args.length != 1) {
            System.err.println(usage);
            System.exit(2);
        }
        Library library;
        switch (args[0]) {
            case "imageio":
                library = new JdkImageIo();
                break;
            case "twelvemonkeys":
                library = new TwelveMonkeysJpeg();
                break;
            default:
                System.err.println("unknown library " + args[0] + "\n" + usage);
                System.exit(2);
                return;
        }
        Harness.run(Harness.specParse(library));
    }
}
