package io.github.zarrdevelopers.jpegconformance;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.math.BigDecimal;
import java.nio.MappedByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The harness protocol of zarr-jpeg-conformance, version 1 (docs/protocol.md of the project),
 * over stdin and stdout, in JSON lines or, when the client offers it, binary framing; {@code
 * bench} is timed here. A harness hands {@link #run} its {@link Codec}, or a {@link Library}
 * through {@link #specParse}, which applies the spec's parse rules and chunk-shape table first.
 */
public final class Harness<H> {
    /** The protocol version this kit speaks; also its major version. */
    public static final int PROTOCOL = 1;
    private static final int TRACE_CAP = 4096;
    /**
     * The largest payload one request may declare, as the Rust, Go and Node kits allow: the suites send a few MiB at
     * most, and a header that declares more is answered with an error, not an OutOfMemoryError that ends the JVM.
     */
    private static final int MAX_PAYLOAD = 1 << 30;
    private static final Map<String, Integer> ITEM_SIZES = Map.ofEntries(
            Map.entry("bool", 1), Map.entry("int8", 1), Map.entry("uint8", 1), Map.entry("int16", 2), Map.entry("uint16", 2),
            Map.entry("int32", 4), Map.entry("uint32", 4), Map.entry("int64", 8), Map.entry("uint64", 8), Map.entry("float16", 2),
            Map.entry("float32", 4), Map.entry("float64", 8), Map.entry("complex64", 8), Map.entry("complex128", 16));

    /** A request the harness cannot act on: an {@code error} reply without a trace. */
    static class BadRequest extends RuntimeException {
        private static final long serialVersionUID = 1L;

        BadRequest(String message) {
            super(message);
        }
    }

    /** A frame whose payload is not read: the next frame cannot be found, so the session ends after the reply. */
    static final class LostFrame extends BadRequest {
        private static final long serialVersionUID = 1L;

        LostFrame(String message) {
            super(message + "; the session ends");
        }
    }

    private final Codec<H> codec;
    private final Wire wire;
    private final Map<String, H> handles = new HashMap<>();
    private boolean started;
    private boolean stopped;
    /** The region a start reply chose shared framing with: mapped from the next request on. */
    private MappedByteBuffer sharedNext;

    private Harness(Codec<H> codec, Wire wire) {
        this.codec = codec;
        this.wire = wire;
    }

    /**
     * Serves {@code codec} on stdin and stdout until {@code stop} or the end of input, then exits
     * the JVM. Whatever else prints to {@code System.out} goes to stderr: stdout is the protocol's.
     */
    public static <H> void run(Codec<H> codec) throws IOException {
        FileOutputStream protocolOut = new FileOutputStream(FileDescriptor.out);
        System.setOut(System.err);
        serve(codec, new FileInputStream(FileDescriptor.in), protocolOut);
        System.exit(0);
    }

    /** Serves {@code codec} on any streams until {@code stop} or the end of input. */
    public static <H> void serve(Codec<H> codec, InputStream in, OutputStream out) throws IOException {
        Wire wire = new Wire(new BufferedInputStream(in, 1 << 16), new BufferedOutputStream(out, 1 << 16));
        new Harness<>(codec, wire).loop();
    }

    /** A {@link Library} behind the spec's parse rules ({@link Config}), dtype rule and chunk-shape table. */
    public static Codec<Config> specParse(Library library) {
        return new SpecParse(library);
    }

    /** Serves requests until {@code stop} or the end of input. */
    private void loop() throws IOException {
        while (!stopped) {
            byte[] line = wire.readLine();
            if (line == null) {
                return;
            }
            Map<String, Object> reply;
            boolean binaryNext = wire.binary;
            long at = -1;
            long room = -1;
            try {
                Map<String, Object> request = read(line);
                if (wire.region != null && request.get("reply_at") instanceof Number && request.get("reply_room") instanceof Number) {
                    at = ((Number) request.get("reply_at")).longValue();
                    room = ((Number) request.get("reply_room")).longValue();
                }
                reply = handle(request);
                binaryNext = wire.binary || "binary".equals(reply.get("framing")) || "shared".equals(reply.get("framing"));
            } catch (BadRequest ex) {
                // Not even a request: the reply cannot name its seq.
                reply = error(null, ex, false);
                stopped = ex instanceof LostFrame;
            }
            wire.write(reply, at, room);
            wire.binary = binaryNext;
            if (sharedNext != null) {
                wire.region = sharedNext;
                sharedNext = null;
            }
        }
    }

    /** One request: a JSON line, or a binary frame's header and payload. */
    @SuppressWarnings("unchecked")
    private Map<String, Object> read(byte[] line) throws IOException {
        Object parsed;
        try {
            parsed = Json.parse(new String(line, StandardCharsets.UTF_8));
        } catch (IllegalArgumentException ex) {
            throw new BadRequest("the request is not JSON: " + ex.getMessage());
        }
        if (!(parsed instanceof Map)) {
            throw new BadRequest("the request is not a JSON object");
        }
        Map<String, Object> request = (Map<String, Object>) parsed;
        if (wire.binary && request.containsKey("payload")) {
            Object declared = request.get("payload");
            if (declared instanceof BigDecimal && ((BigDecimal) declared).signum() > 0
                    && ((BigDecimal) declared).compareTo(BigDecimal.valueOf(MAX_PAYLOAD)) > 0) {
                throw new LostFrame("a payload of " + Json.show(declared) + " bytes is over this harness's limit of " + MAX_PAYLOAD);
            }
            Integer n = Config.integer(declared);
            if (n == null || n < 0) {
                throw new BadRequest("payload must be a non-negative integer, got " + Json.show(declared));
            }
            byte[] payload;
            if (wire.region != null && request.get("at") instanceof Number) {
                long at = ((Number) request.remove("at")).longValue();
                payload = wire.fromRegion(at, n);
                if (payload == null) {
                    throw new BadRequest("a payload of " + n + " bytes at " + at + " is outside the region of "
                            + wire.region.capacity() + " bytes");
                }
            } else {
                try {
                    payload = wire.readPayload(n);
                } catch (OutOfMemoryError ex) {
                    throw new LostFrame("no memory for a payload of " + n + " bytes");
                }
            }
            Object chunk = request.get("chunk");
            // The chunk's samples (encode, or bench of encode), else the stream.
            Map<String, Object> holder = chunk instanceof Map ? (Map<String, Object>) chunk : request;
            holder.put("data", payload);
        }
        return request;
    }

    private Map<String, Object> handle(Map<String, Object> request) {
        Integer seq = Config.integer(request.get("seq"));
        if (seq == null || seq < 0) {
            throw new BadRequest("the request has no integer seq");
        }
        try {
            Map<String, Object> reply = new LinkedHashMap<>();
            reply.put("seq", seq);
            reply.put("status", "ok");
            reply.putAll(dispatch(request));
            return reply;
        } catch (Rejection ex) {
            Map<String, Object> reply = new LinkedHashMap<>();
            reply.put("seq", seq);
            reply.put("status", "rejected");
            reply.put("message", ex.getMessage());
            reply.put("exception", ex.exception);
            if (ex.requirement != null) {
                reply.put("requirement", ex.requirement);
            }
            return reply;
        } catch (BadRequest ex) {
            return error(seq, ex, false);
        } catch (IOException ex) {
            // ImageIO's way of refusing a stream or an image (IIOException), or of finding it short (EOFException).
            Map<String, Object> reply = new LinkedHashMap<>();
            reply.put("seq", seq);
            reply.put("status", "rejected");
            reply.put("message", codec.name() + " refused it: " + ex.getMessage());
            reply.put("exception", ex.getClass().getName());
            return reply;
        } catch (Throwable ex) { // the library's bugs (and OutOfMemoryError) are this case's error, not the process's end
            return error(seq, ex, true);
        }
    }

    private static Map<String, Object> error(Integer seq, Throwable ex, boolean trace) {
        Map<String, Object> reply = new LinkedHashMap<>();
        reply.put("seq", seq == null ? Json.NULL : seq);
        reply.put("status", "error");
        reply.put("message", String.valueOf(ex.getMessage()));
        reply.put("exception", ex instanceof BadRequest ? "BadRequest" : ex.getClass().getName());
        if (trace) {
            StringWriter text = new StringWriter();
            ex.printStackTrace(new PrintWriter(text));
            String s = text.toString();
            reply.put("trace", s.length() > TRACE_CAP ? s.substring(0, TRACE_CAP) : s);
        }
        return reply;
    }

    private Map<String, Object> dispatch(Map<String, Object> request) throws Rejection, IOException {
        Object op = request.get("op");
        if ("start".equals(op)) {
            return start(request);
        }
        if ("stop".equals(op)) {
            stopped = true;
            return Map.of();
        }
        if (!started) {
            throw new BadRequest(Json.show(op) + " before start");
        }
        if ("parse".equals(op)) {
            if (!request.containsKey("codec")) {
                throw new BadRequest("a parse request needs a codec");
            }
            H parsed = codec.parse(request.get("codec"));
            String handle = Integer.toString(handles.size() + 1);
            handles.put(handle, parsed);
            return Map.of("handle", handle);
        }
        if (("encode".equals(op) || "decode".equals(op)) && !codec.roles().contains(op)) {
            throw new BadRequest("this harness does not " + op + " (its roles are " + Json.write(codec.roles()) + ")");
        }
        if ("encode".equals(op)) {
            return encode(parsedOf(request), request.get("chunk"));
        }
        if ("decode".equals(op)) {
            return decode(parsedOf(request), bytes(request, "data"), request.get("chunk_shape"));
        }
        if ("bench".equals(op)) {
            return bench(request);
        }
        if ("build".equals(op) && codec.roles().contains("build")) {
            if (!(request.get("options") instanceof Map)) {
                throw new BadRequest("build options must be an object, got " + Json.show(request.get("options")));
            }
            @SuppressWarnings("unchecked")
            Map<String, Object> options = (Map<String, Object>) request.get("options");
            Map<String, Object> reply = new LinkedHashMap<>();
            reply.put("codec", codec.build(options));
            return reply;
        }
        throw new BadRequest("unknown op " + Json.show(op));
    }

    /** Bounds a bench request: a client's slip must not hold the harness for hours. */
    private static final int MAX_REPEAT = 100_000;

    /**
     * Does what the encode or decode request named by {@code of} does, {@code repeat} times in a
     * row, and replies with the seconds each took ({@link System#nanoTime}): the library's own
     * speed in this JVM, which the protocol benchmark compares its throughput through the protocol with.
     */
    private Map<String, Object> bench(Map<String, Object> request) throws Rejection, IOException {
        Object of = request.get("of");
        Integer repeat = Config.integer(request.get("repeat"));
        if (repeat == null || repeat < 1 || repeat > MAX_REPEAT) {
            throw new BadRequest("bench: repeat must be 1 to " + MAX_REPEAT + ", got " + Json.show(request.get("repeat")));
        }
        if (!"encode".equals(of) && !"decode".equals(of)) {
            throw new BadRequest("bench: of must be \"encode\" or \"decode\", got " + Json.show(of));
        }
        Map<String, Object> one = new LinkedHashMap<>(request);
        one.put("op", of);
        List<Double> seconds = new ArrayList<>(repeat);
        for (int i = 0; i < repeat; i++) {
            long start = System.nanoTime();
            dispatch(one);
            seconds.add((System.nanoTime() - start) / 1e9);
        }
        Map<String, Object> reply = new LinkedHashMap<>();
        reply.put("seconds", seconds);
        return reply;
    }

    private Map<String, Object> start(Map<String, Object> request) {
        Integer protocol = Config.integer(request.get("protocol"));
        if (protocol == null || protocol != PROTOCOL) {
            throw new BadRequest("this harness speaks protocol " + PROTOCOL + ", not " + Json.show(request.get("protocol")));
        }
        started = true;
        Map<String, Object> reply = new LinkedHashMap<>();
        reply.put("protocol", PROTOCOL);
        reply.put("name", codec.name());
        reply.put("version", codec.version());
        reply.put("roles", codec.roles());
        reply.put("versions", codec.versions());
        reply.put("kind", codec.kind());
        reply.put("language", "Java");
        Object framings = request.get("framings");
        if (framings instanceof List && ((List<?>) framings).contains("shared") && wire.region == null
                && request.get("region") instanceof Map) {
            Map<?, ?> region = (Map<?, ?>) request.get("region");
            // Switched to after the reply, as binary framing is; a region it cannot map leaves binary framing.
            sharedNext = Wire.map(region.get("path"), region.get("size"));
        }
        if (sharedNext != null) {
            reply.put("framing", "shared");
        } else if (framings instanceof List && ((List<?>) framings).contains("binary")) {
            reply.put("framing", "binary");
        }
        return reply;
    }

    private H parsedOf(Map<String, Object> request) {
        String handle = request.get("handle") instanceof String ? (String) request.get("handle") : null;
        if (handle == null || !handles.containsKey(handle)) {
            throw new BadRequest("unknown handle " + Json.show(request.get("handle")));
        }
        return handles.get(handle);
    }

    /** The binary field {@code key} of {@code holder}: the frame's payload, or base64 text. */
    private static byte[] bytes(Map<String, Object> holder, String key) {
        Object value = holder.get(key);
        if (value instanceof byte[]) {
            return (byte[]) value;
        }
        if (!(value instanceof String)) {
            throw new BadRequest(key + " must be base64 text or a frame's payload, got " + Json.show(value));
        }
        try {
            return Base64.getDecoder().decode((String) value);
        } catch (IllegalArgumentException ex) {
            throw new BadRequest(key + " is not base64: " + ex.getMessage());
        }
    }

    private static int[] shape(Object value) {
        if (value instanceof List) {
            List<?> axes = (List<?>) value;
            int[] shape = new int[axes.size()];
            for (int i = 0; i < shape.length; i++) {
                Integer n = Config.integer(axes.get(i));
                if (n == null || n < 0 || !(axes.get(i) instanceof BigDecimal)) {
                    shape = null;
                    break;
                }
                shape[i] = n;
            }
            if (shape != null) {
                return shape;
            }
        }
        throw new BadRequest("a shape must be an array of non-negative integers, got " + Json.show(value));
    }

    private Map<String, Object> encode(H handle, Object chunkValue) throws Rejection, IOException {
        if (!(chunkValue instanceof Map)) {
            throw new BadRequest("an encode request needs a chunk object");
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> chunk = (Map<String, Object>) chunkValue;
        int[] shape = shape(chunk.get("shape"));
        Object dtype = chunk.get("dtype");
        Integer itemSize = ITEM_SIZES.get(dtype instanceof String ? (String) dtype : "");
        if (itemSize == null) {
            throw new BadRequest("unknown dtype " + Json.show(dtype));
        }
        byte[] data = bytes(chunk, "data");
        long count = 1;
        try {
            for (int n : shape) {
                count = Math.multiplyExact(count, n);
            }
            count = Math.multiplyExact(count, itemSize);
        } catch (ArithmeticException ex) {
            count = -1;
        }
        if (count != data.length) {
            throw new BadRequest("chunk data has " + data.length + " bytes, shape " + Json.write(shape) + " of " + dtype + " needs " + count);
        }
        return Map.of("data", codec.encode(handle, new Codec.Chunk(shape, (String) dtype, data)));
    }

    private Map<String, Object> decode(H handle, byte[] stream, Object chunkShape) throws Rejection, IOException {
        int[] shape = shape(chunkShape);
        byte[] samples = codec.decode(handle, stream, shape);
        long count = 1;
        for (int n : shape) {
            count *= n;
        }
        if (samples.length != count) {
            throw new IllegalStateException(codec.name() + " returned " + samples.length + " samples for a " + Json.write(shape) + " chunk");
        }
        Map<String, Object> chunk = new LinkedHashMap<>();
        chunk.put("shape", shape);
        chunk.put("dtype", "uint8");
        chunk.put("data", samples);
        Map<String, Object> reply = new LinkedHashMap<>();
        reply.put("chunk", chunk);
        return reply;
    }
}
