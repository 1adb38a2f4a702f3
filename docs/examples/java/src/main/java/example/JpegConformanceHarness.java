package example;

import io.github.zarrdevelopers.jpegconformance.Codec;
import io.github.zarrdevelopers.jpegconformance.Config;
import io.github.zarrdevelopers.jpegconformance.Harness;
import io.github.zarrdevelopers.jpegconformance.Rejection;
import java.awt.image.BufferedImage;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import javax.imageio.ImageIO;
import javax.imageio.ImageReader;
import javax.imageio.stream.ImageInputStream;

/**
 * The conformance harness of a Zarr jpeg codec in Java, on the harness kit: the kit speaks the
 * protocol, this class calls the codec. The codec here is the JDK's javax.imageio (it decodes; this
 * harness does not encode); it has no parser of its own, so parse borrows the kit's. A codec that
 * parses its configuration itself calls its own parser there: its verdicts are then its own.
 */
public final class JpegConformanceHarness implements Codec<Config> {
    public String name() { return "example-imageio"; }
    public String version() { return "0.1.0"; }
    public Map<String, String> versions() { return Map.of("java", Runtime.version().toString()); }
    public List<String> roles() { return List.of("decode"); }

    public Config parse(Object codec) throws Rejection {
        Config config = Config.parse(codec);
        // An optional feature the codec does not have is refused when parsing, as the spec asks.
        if (config.decoded().equals("ycbcr")) {
            throw new Rejection("JPEG-DCS-05", "this codec returns RGB, never the stored YCbCr", "Unsupported");
        }
        return config;
    }

    public byte[] encode(Config config, Chunk chunk) throws Rejection {
        throw new Rejection(null, "this harness does not encode", "Unsupported"); // not asked: roles() is decode only
    }

    public byte[] decode(Config config, byte[] stream, int[] shape) throws Rejection, IOException {
        int components = shape.length == 3 ? shape[2] : 1;
        if (shape.length < 2 || shape.length > 3 || components != config.chunkComponents()) {
            throw new Rejection("JPEG-DIM-03", "chunk shape " + Arrays.toString(shape) + " cannot hold " + config.decoded(), "ChunkError");
        }
        ImageReader reader = ImageIO.getImageReadersByFormatName("jpeg").next();
        try (ImageInputStream input = ImageIO.createImageInputStream(new ByteArrayInputStream(stream))) {
            reader.setInput(input);
            // Before any pixel is decoded: a frame that does not fit the chunk is refused, not cropped.
            // An IOException (how ImageIO refuses a stream) is a refusal too.
            if (reader.getHeight(0) != shape[0] || reader.getWidth(0) != shape[1]) {
                throw new Rejection("JPEG-DIM-03", "the stream is " + reader.getHeight(0) + "x" + reader.getWidth(0)
                        + ", the chunk " + Arrays.toString(shape), "StreamError");
            }
            BufferedImage image = reader.read(0);
            if (image.getRaster().getNumBands() != components) {
                throw new Rejection("JPEG-DIM-03", "the stream has " + image.getRaster().getNumBands() + " component(s), the chunk "
                        + components, "StreamError");
            }
            return samples(image, components);
        } finally {
            reader.dispose();
        }
    }

    /** The image's samples in C order: gray as stored, colour as sRGB. */
    private static byte[] samples(BufferedImage image, int components) {
        int height = image.getHeight(), width = image.getWidth();
        byte[] out = new byte[height * width * components];
        if (components == 1) {
            int[] gray = image.getRaster().getSamples(0, 0, width, height, 0, (int[]) null);
            for (int i = 0; i < gray.length; i++) {
                out[i] = (byte) gray[i];
            }
            return out;
        }
        for (int y = 0, i = 0; y < height; y++) {
            for (int x = 0; x < width; x++, i += 3) {
                int rgb = image.getRGB(x, y);
                out[i] = (byte) (rgb >> 16);
                out[i + 1] = (byte) (rgb >> 8);
                out[i + 2] = (byte) rgb;
            }
        }
        return out;
    }

    public static void main(String[] args) throws IOException {
        Harness.run(new JpegConformanceHarness());
    }
}
