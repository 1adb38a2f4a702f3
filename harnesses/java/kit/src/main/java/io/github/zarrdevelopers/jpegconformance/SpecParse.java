package io.github.zarrdevelopers.jpegconformance;

import java.io.IOException;
import java.util.Map;

/** A {@link Library} as a {@link Codec}: the spec's parse rules, dtype rule and chunk-shape table, then the library. */
final class SpecParse implements Codec<Config> {
    private final Library library;

    SpecParse(Library library) {
        this.library = library;
    }

    @Override
    public String name() {
        return library.name();
    }

    @Override
    public String version() {
        return library.version();
    }

    @Override
    public Map<String, String> versions() {
        return library.versions();
    }

    @Override
    public String kind() {
        return "library";
    }

    @Override
    public Config parse(Object codec) throws Rejection {
        Config config = Config.parse(codec);
        library.accepts(config);
        return config;
    }

    @Override
    public byte[] encode(Config config, Chunk chunk) throws Rejection, IOException {
        int[] shape = chunk.shape();
        if (!chunk.dtype().equals("uint8")) {
            throw new Rejection("JPEG-DT-01", "chunk dtype is " + chunk.dtype() + ": only uint8 is supported", "ChunkError");
        }
        int[] g = geometry(shape);
        if (g[2] != config.chunkComponents()) {
            throw new Rejection("JPEG-CFG-02", "chunk shape " + Json.write(shape) + " has " + g[2] + " component(s), encoded_color_space "
                    + config.encoded() + " needs " + config.components(), "ChunkError");
        }
        return library.encode(config, chunk.data(), g[0], g[1], g[2]);
    }

    @Override
    public byte[] decode(Config config, byte[] stream, int[] shape) throws Rejection, IOException {
        int[] g = geometry(shape);
        if (g[2] != config.chunkComponents()) {
            throw new Rejection("JPEG-DIM-03", "chunk shape " + Json.write(shape) + " has " + g[2] + " component(s), decoded_color_space "
                    + config.decoded() + " has " + config.chunkComponents(), "ChunkError");
        }
        return library.decode(config, stream, g[0], g[1], g[2]);
    }

    /**
     * {height, width, components} of a chunk shape, by the spec's "Supported chunk shapes" table
     * and its 65535 limit on each spatial axis.
     */
    static int[] geometry(int[] shape) throws Rejection {
        String text = Json.write(shape);
        if (shape.length < 2) {
            throw new Rejection("JPEG-SHP-01", "chunk shape " + text + " is " + shape.length + "D: reshape to 2D first", "ChunkError");
        }
        if (shape.length > 3) {
            throw new Rejection("JPEG-SHP-06", "chunk shape " + text + " is " + shape.length + "D: at most 3D", "ChunkError");
        }
        int components = shape.length == 2 ? 1 : shape[2];
        if (components != 1 && components != 3) {
            throw new Rejection("JPEG-SHP-05", "chunk shape " + text + " has " + components + " channels: 1 or 3 fit a JPEG image", "ChunkError");
        }
        for (int axis = 0; axis < 2; axis++) {
            if (shape[axis] < 1 || shape[axis] > 65535) {
                throw new Rejection("JPEG-DIM-02", "chunk shape " + text + ": a JPEG image's " + (axis == 0 ? "height" : "width")
                        + " is 1 to 65535, got " + shape[axis], "ChunkError");
            }
        }
        return new int[] {shape[0], shape[1], components};
    }
}
