package zarrjpeg.harness;

import java.awt.Transparency;
import java.awt.color.ColorSpace;
import java.awt.image.BufferedImage;
import java.awt.image.ColorModel;
import java.awt.image.ComponentColorModel;
import java.awt.image.ComponentSampleModel;
import java.awt.image.DataBuffer;
import java.awt.image.DataBufferByte;
import java.awt.image.Raster;
import java.awt.image.WritableRaster;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.imageio.IIOException;
import javax.imageio.IIOImage;
import javax.imageio.ImageIO;
import javax.imageio.ImageReader;
import javax.imageio.ImageTypeSpecifier;
import javax.imageio.ImageWriteParam;
import javax.imageio.ImageWriter;
import javax.imageio.metadata.IIOMetadata;
import javax.imageio.metadata.IIOMetadataFormatImpl;
import javax.imageio.metadata.IIOMetadataNode;
import javax.imageio.stream.ImageOutputStream;
import javax.imageio.stream.MemoryCacheImageInputStream;
import javax.imageio.stream.MemoryCacheImageOutputStream;
import io.github.zarrdevelopers.jpegconformance.Config;
import io.github.zarrdevelopers.jpegconformance.Library;
import io.github.zarrdevelopers.jpegconformance.Rejection;
import org.w3c.dom.Node;

/**
 * A Zarr jpeg codec over one javax.imageio JPEG plugin, written the way zarr-java's proposed
 * codec uses ImageIO: quality through {@link ImageWriteParam}, sampling factors and the APP14
 * Adobe marker through the plugin's native metadata tree, Rasters where the samples must not be
 * color converted. Subclasses pick the plugin; both plugins are on the class path, so the
 * choice is by provider class, not by ImageIO's ordering.
 */
abstract class ImageIoJpeg implements Library {
    /** The JDK's native metadata format, which both plugins read and write. */
    static final String NATIVE_FORMAT = "javax_imageio_jpeg_image_1.0";

    private final String name;
    /** The plugin's Java package: its readers' and writers' classes start with it. */
    private final String pluginPackage;

    ImageIoJpeg(String name, String pluginPackage) {
        this.name = name;
        this.pluginPackage = pluginPackage;
    }

    @Override
    public String name() {
        return name;
    }

    /** The harness jar's version (its manifest's Implementation-Version). */
    @Override
    public String version() {
        String version = ImageIoJpeg.class.getPackage().getImplementationVersion();
        return version == null ? "unknown (not run from its jar)" : version;
    }

    @Override
    public Map<String, String> versions() {
        Map<String, String> versions = new LinkedHashMap<>();
        versions.put("java", System.getProperty("java.runtime.version"));
        versions.put("java.vendor", System.getProperty("java.vendor"));
        versions.put("libjpeg", nativeLibjpeg());
        return versions;
    }

    /**
     * The libjpeg under the JDK's plugin (both plugins decode through it). JDK builds differ:
     * Debian's links the system libjpeg-turbo (libjpeg.so.62), others bundle IJG libjpeg 6b
     * inside libjavajpeg. Read from the libraries the process has mapped, once a reader has
     * loaded the native code.
     */
    private String nativeLibjpeg() {
        reader().dispose();
        try {
            for (String line : Files.readAllLines(Paths.get("/proc/self/maps"))) {
                int at = line.indexOf('/');
                if (at >= 0 && line.substring(at).matches(".*/libjpeg\\.so[.0-9]*")) {
                    return Paths.get(line.substring(at)).toRealPath().getFileName() + " (linked by libjavajpeg)";
                }
            }
        } catch (IOException | SecurityException unreadable) {
            return "unknown (no /proc/self/maps)";
        }
        return "bundled in libjavajpeg (IJG 6b)";
    }

    private boolean ours(Object readerOrWriter) {
        return readerOrWriter.getClass().getName().startsWith(pluginPackage);
    }

    private ImageReader reader() {
        for (Iterator<ImageReader> it = ImageIO.getImageReadersByFormatName("jpeg"); it.hasNext(); ) {
            ImageReader reader = it.next();
            if (ours(reader)) {
                return reader;
            }
            reader.dispose();
        }
        throw new IllegalStateException(name() + ": its ImageIO JPEG reader is not registered");
    }

    private ImageWriter writer() {
        for (Iterator<ImageWriter> it = ImageIO.getImageWritersByFormatName("jpeg"); it.hasNext(); ) {
            ImageWriter writer = it.next();
            if (ours(writer)) {
                return writer;
            }
            writer.dispose();
        }
        throw new IllegalStateException(name() + ": its ImageIO JPEG writer is not registered");
    }

    // ------------------------------------------------------------------ encode

    @Override
    public byte[] encode(Config config, byte[] samples, int height, int width, int components) throws Rejection, IOException {
        // C-order uint8 samples are already a pixel-interleaved raster: wrap them, no copy.
        int[] offsets = components == 1 ? new int[] {0} : new int[] {0, 1, 2};
        WritableRaster raster = Raster.createInterleavedRaster(
                new DataBufferByte(samples, samples.length), width, height, width * components, components, offsets, null);
        ColorSpace space = ColorSpace.getInstance(components == 1 ? ColorSpace.CS_GRAY : ColorSpace.CS_sRGB);
        ColorModel model = new ComponentColorModel(space, false, false, Transparency.OPAQUE, DataBuffer.TYPE_BYTE);
        BufferedImage image = new BufferedImage(model, raster, false, null);

        ImageWriter writer = writer();
        try {
            ImageWriteParam param = writer.getDefaultWriteParam();
            param.setCompressionMode(ImageWriteParam.MODE_EXPLICIT);
            param.setCompressionQuality(config.quality() / 100f);
            IIOMetadata metadata = writer.getDefaultImageMetadata(new ImageTypeSpecifier(image), param);
            describe(metadata, config);
            // A BufferedImage is color converted by the writer (RGB -> YCbCr for JFIF); a Raster
            // is written as it is, which is what YCbCr input (decoded_color_space ycbcr) needs.
            IIOImage content = config.decoded().equals("ycbcr") ? new IIOImage(raster, null, metadata) : new IIOImage(image, null, metadata);
            ByteArrayOutputStream out = new ByteArrayOutputStream(Math.max(1024, samples.length / 4));
            try (ImageOutputStream stream = new MemoryCacheImageOutputStream(out)) {
                writer.setOutput(stream);
                writer.write(null, content, param);
            }
            return out.toByteArray();
        } finally {
            writer.dispose();
        }
    }

    /** Sampling factors, and for rgb the APP14 Adobe marker in place of JFIF, in the native tree. */
    private static void describe(IIOMetadata metadata, Config config) throws IOException {
        IIOMetadataNode root = (IIOMetadataNode) metadata.getAsTree(NATIVE_FORMAT);
        IIOMetadataNode sequence = child(root, "markerSequence");
        IIOMetadataNode frame = child(sequence, "sof");
        int i = 0;
        for (Node spec = frame.getFirstChild(); spec != null; spec = spec.getNextSibling(), i++) {
            IIOMetadataNode component = (IIOMetadataNode) spec;
            component.setAttribute("HsamplingFactor", Integer.toString(config.subsampling()[i][0]));
            component.setAttribute("VsamplingFactor", Integer.toString(config.subsampling()[i][1]));
        }
        if (config.encoded().equals("rgb")) {
            IIOMetadataNode variety = child(root, "JPEGvariety");
            while (variety.hasChildNodes()) {
                variety.removeChild(variety.getFirstChild()); // no JFIF: it would mean YCbCr
            }
            IIOMetadataNode adobe = new IIOMetadataNode("app14Adobe");
            adobe.setAttribute("version", "100");
            adobe.setAttribute("flags0", "0");
            adobe.setAttribute("flags1", "0");
            adobe.setAttribute("transform", "0"); // unknown: the components are stored as they are
            sequence.insertBefore(adobe, sequence.getFirstChild());
        }
        metadata.setFromTree(NATIVE_FORMAT, root);
    }

    private static IIOMetadataNode child(IIOMetadataNode parent, String name) throws IIOException {
        for (Node node = parent.getFirstChild(); node != null; node = node.getNextSibling()) {
            if (node.getNodeName().equals(name)) {
                return (IIOMetadataNode) node;
            }
        }
        throw new IIOException("the writer's default metadata has no " + name + " node");
    }

    // ------------------------------------------------------------------ decode

    @Override
    public byte[] decode(Config config, byte[] stream, int height, int width, int components) throws Rejection, IOException {
        ImageReader reader = reader();
        try (MemoryCacheImageInputStream input = new MemoryCacheImageInputStream(new ByteArrayInputStream(stream))) {
            reader.setInput(input, true, false);
            // The header first: a frame that does not fit the chunk is refused before any
            // pixel buffer is allocated for it.
            int streamWidth = reader.getWidth(0);
            int streamHeight = reader.getHeight(0);
            if ((long) streamHeight * streamWidth != (long) height * width) {
                throw new Rejection("JPEG-DIM-03", "the stream is " + streamHeight + "x" + streamWidth + " (HxW), the chunk needs "
                        + height + "x" + width, "StreamError");
            }
            if (streamHeight != height || streamWidth != width) {
                throw new Rejection("JPEG-X-08", "the stream is " + streamHeight + "x" + streamWidth + " (HxW), a different "
                        + "factorization of the chunk's " + height + "x" + width, "StreamError");
            }
            Raster raster;
            if (config.decoded().equals("ycbcr")) {
                // readRaster returns the samples as stored, with no color conversion: right
                // only for a stream that stores YCbCr, which the plugin's metadata tells.
                String stored = storedColorSpace(reader.getImageMetadata(0));
                if (!stored.equals("YCbCr")) {
                    throw new Rejection("JPEG-ECS-12", "the stream stores " + stored + ": " + name()
                            + " returns stored samples unconverted and cannot give YCbCr from it", "StreamError");
                }
                raster = reader.readRaster(0, null);
            } else {
                raster = reader.read(0).getRaster();
            }
            if (raster.getNumBands() != components) {
                throw new Rejection("JPEG-DIM-03", name() + " decoded " + raster.getNumBands() + " component(s), the chunk has "
                        + components, "StreamError");
            }
            return samples(raster);
        } finally {
            reader.dispose();
        }
    }

    /** The stored color space ("YCbCr", "RGB", "GRAY", ...) by the plugin's standard metadata. */
    private static String storedColorSpace(IIOMetadata metadata) throws IIOException {
        if (metadata == null || !metadata.isStandardMetadataFormatSupported()) {
            throw new IIOException("the reader gives no standard metadata for the stream");
        }
        Node root = metadata.getAsTree(IIOMetadataFormatImpl.standardMetadataFormatName);
        for (Node chroma = root.getFirstChild(); chroma != null; chroma = chroma.getNextSibling()) {
            if (!chroma.getNodeName().equals("Chroma")) {
                continue;
            }
            for (Node node = chroma.getFirstChild(); node != null; node = node.getNextSibling()) {
                if (node.getNodeName().equals("ColorSpaceType")) {
                    return node.getAttributes().getNamedItem("name").getNodeValue();
                }
            }
        }
        throw new IIOException("the reader's metadata names no color space");
    }

    /** The raster's samples, pixel-interleaved in band order, as uint8. */
    private byte[] samples(Raster raster) throws Rejection {
        for (int size : raster.getSampleModel().getSampleSize()) {
            if (size != 8) {
                throw new Rejection("JPEG-X-10", name() + " decoded " + size + "-bit samples: the chunk holds uint8", "StreamError");
            }
        }
        int w = raster.getWidth();
        int h = raster.getHeight();
        if (raster.getTransferType() == DataBuffer.TYPE_BYTE && raster.getSampleModel() instanceof ComponentSampleModel) {
            return (byte[]) raster.getDataElements(raster.getMinX(), raster.getMinY(), w, h, null);
        }
        int[] pixels = raster.getPixels(raster.getMinX(), raster.getMinY(), w, h, (int[]) null);
        byte[] out = new byte[pixels.length];
        for (int i = 0; i < pixels.length; i++) {
            out[i] = (byte) pixels[i];
        }
        return out;
    }
}
