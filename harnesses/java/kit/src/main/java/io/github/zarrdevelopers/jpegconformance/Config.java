package io.github.zarrdevelopers.jpegconformance;

import java.math.BigDecimal;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The codec object's parse rules, as the spec states them (the "Configuration parameters"
 * section): what a Java codec does before it calls the JPEG library, which has no notion of
 * a Zarr configuration. Every default is applied here.
 *
 * @param quality 1-100
 * @param encoded "grayscale", "ycbcr" or "rgb": what the stream stores
 * @param decoded "grayscale", "ycbcr" or "rgb": what the chunk holds
 * @param subsampling {h, v} per component
 */
public record Config(int quality, String encoded, String decoded, int[][] subsampling) {
    private static final List<String> COLOR_SPACES = List.of("grayscale", "ycbcr", "rgb");
    private static final Set<String> MEMBERS = Set.of("quality", "encoded_color_space", "decoded_color_space", "subsampling");
    /** decoded/encoded pairs of the spec's conversion table. */
    private static final Set<String> COMBINATIONS = Set.of("grayscale/grayscale", "rgb/ycbcr", "rgb/rgb", "ycbcr/ycbcr");

    /** Components of the stream, fixed by encoded_color_space. */
    public int components() {
        return encoded.equals("grayscale") ? 1 : 3;
    }

    /** Components of the chunk, fixed by decoded_color_space. */
    public int chunkComponents() {
        return decoded.equals("grayscale") ? 1 : 3;
    }

    public static Config parse(Object codec) throws Rejection {
        if (!(codec instanceof Map)) {
            throw new Rejection("JPEG-CFG-01", "the codec object must be a JSON object, got " + Json.show(codec), "ConfigError");
        }
        Map<?, ?> object = (Map<?, ?>) codec;
        if (!"jpeg".equals(object.get("name"))) {
            throw new Rejection("JPEG-NAME-01", "the codec name must be \"jpeg\", got " + Json.show(object.get("name")), "ConfigError");
        }
        // must_understand: Zarr v3 core allows it on every extension object, a codec too (JPEG-X-19).
        for (Object key : object.keySet()) {
            if (!key.equals("name") && !key.equals("configuration") && !key.equals("must_understand")) {
                throw new Rejection("JPEG-X-01", "unknown member of the codec object: " + key, "ConfigError");
            }
        }
        if (object.containsKey("must_understand") && !(object.get("must_understand") instanceof Boolean)) {
            throw new Rejection("JPEG-X-19", "\"must_understand\" must be true or false, got "
                    + Json.show(object.get("must_understand")), "ConfigError");
        }
        if (!(object.get("configuration") instanceof Map)) {
            throw new Rejection("JPEG-CFG-01", "\"configuration\" must be a JSON object, got " + Json.show(object.get("configuration")), "ConfigError");
        }
        Map<?, ?> cfg = (Map<?, ?>) object.get("configuration");
        for (Object key : cfg.keySet()) {
            if (!MEMBERS.contains(key)) {
                throw new Rejection("JPEG-X-01", "unknown configuration member: " + key, "ConfigError");
            }
        }

        if (!cfg.containsKey("quality")) {
            throw new Rejection("JPEG-Q-05", "quality is required and has no default", "ConfigError");
        }
        Integer quality = integer(cfg.get("quality"));
        if (quality == null || quality < 1 || quality > 100) {
            throw new Rejection("JPEG-Q-01", "quality must be an integer from 1 to 100, got " + Json.show(cfg.get("quality")), "ConfigError");
        }
        if (!cfg.containsKey("encoded_color_space")) {
            throw new Rejection("JPEG-ECS-07", "encoded_color_space is required", "ConfigError");
        }
        String encoded = colorSpace(cfg, "encoded_color_space", "JPEG-ECS-01");
        String decoded = cfg.containsKey("decoded_color_space")
                ? colorSpace(cfg, "decoded_color_space", "JPEG-DCS-01")
                : encoded.equals("grayscale") ? "grayscale" : "rgb";
        if (!COMBINATIONS.contains(decoded + "/" + encoded)) {
            throw new Rejection("JPEG-DCS-04", "decoded_color_space " + decoded + " with encoded_color_space " + encoded + " is not allowed", "ConfigError");
        }

        int components = encoded.equals("grayscale") ? 1 : 3;
        int[][] standard = new int[components][];
        Arrays.setAll(standard, i -> new int[] {1, 1});
        int[][] factors = standard;
        if (!cfg.containsKey("subsampling")) {
            if (encoded.equals("ycbcr")) {
                throw new Rejection("JPEG-SUB-04", "subsampling is required with encoded_color_space ycbcr", "ConfigError");
            }
        } else {
            factors = factors(cfg.get("subsampling"), components);
            if (encoded.equals("ycbcr")) {
                for (int i = 1; i < components; i++) {
                    if (factors[i][0] != 1 || factors[i][1] != 1) {
                        throw new Rejection("JPEG-SUB-03", "the chroma factors must be [1, 1], got " + Json.show(cfg.get("subsampling")), "ConfigError");
                    }
                }
            } else if (!Arrays.deepEquals(factors, standard)) {
                throw new Rejection("JPEG-SUB-07", "subsampling with " + encoded + " must be its default " + Json.write(List.of(standard))
                        + ", got " + Json.show(cfg.get("subsampling")), "ConfigError");
            }
        }
        return new Config(quality, encoded, decoded, factors);
    }

    private static String colorSpace(Map<?, ?> cfg, String key, String requirement) throws Rejection {
        Object value = cfg.get(key);
        if (!(value instanceof String) || !COLOR_SPACES.contains(value)) {
            throw new Rejection(requirement, key + " must be one of grayscale, ycbcr, rgb, got " + Json.show(value), "ConfigError");
        }
        return (String) value;
    }

    private static int[][] factors(Object value, int components) throws Rejection {
        if (!(value instanceof List)) {
            throw new Rejection("JPEG-SUB-01", "subsampling must be an array of [h, v] pairs, got " + Json.show(value), "ConfigError");
        }
        List<?> entries = (List<?>) value;
        if (entries.size() != components) {
            throw new Rejection("JPEG-CFG-01", "subsampling has " + entries.size() + " entries for " + components + " component(s)", "ConfigError");
        }
        int[][] factors = new int[components][];
        for (int i = 0; i < components; i++) {
            Object entry = entries.get(i);
            if (entry instanceof List && ((List<?>) entry).size() == 2) {
                Integer h = integer(((List<?>) entry).get(0));
                Integer v = integer(((List<?>) entry).get(1));
                if (h != null && v != null && h >= 1 && h <= 4 && v >= 1 && v <= 4) {
                    factors[i] = new int[] {h, v};
                    continue;
                }
            }
            throw new Rejection("JPEG-SUB-01", "each subsampling entry must be [h, v] with integers from 1 to 4, got " + Json.show(entry), "ConfigError");
        }
        return factors;
    }

    /** The integer a JSON number stands for (90.0 is 90: JPEG-X-02 allows it), or null. */
    static Integer integer(Object value) {
        if (!(value instanceof BigDecimal)) {
            return null;
        }
        try {
            return ((BigDecimal) value).intValueExact();
        } catch (ArithmeticException notAnInt) {
            return null;
        }
    }
}
