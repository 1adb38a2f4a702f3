package io.github.zarrdevelopers.jpegconformance;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Base64;
import java.util.Map;

/**
 * The protocol's two framings on stdin/stdout (docs/protocol.md). JSON lines: one message a
 * line, arrays and streams base64 inside it. Binary, once the start reply chose it: a JSON
 * header line and, when it has {@code "payload": N}, exactly N raw bytes after it.
 *
 * <p>Inside the harness a message is a map whose one binary field (a request's or reply's
 * {@code data}, at the top or in {@code chunk}) holds a {@code byte[]}: the framing decides
 * whether it travels as base64 or as the payload.
 *
 * <p>Shared framing is binary framing with the client's memory region mapped: a header with
 * {@code "at": A} has its payload in the region at A (none follows it), and a reply's payload
 * goes into the room its request set aside ({@code "reply_at"}, {@code "reply_room"}) when it fits.
 */
final class Wire {
    private final InputStream in;
    private final OutputStream out;
    private final byte[] buffer = new byte[1 << 16];
    private int position;
    private int limit;
    /** Binary framing, from the request after the start reply on. */
    boolean binary;
    /** The client's region (shared framing), once mapped; null: payloads travel on the streams. */
    MappedByteBuffer region;

    Wire(InputStream in, OutputStream out) {
        this.in = in;
        this.out = out;
    }

    /** The next line without its end, or null at end of input; blank lines are skipped. */
    byte[] readLine() throws IOException {
        while (true) {
            byte[] line = rawLine();
            if (line == null) {
                return null;
            }
            int end = line.length;
            if (end > 0 && line[end - 1] == '\r') {
                end--;
            }
            boolean blank = true;
            for (int i = 0; i < end && blank; i++) {
                blank = line[i] == ' ' || line[i] == '\t';
            }
            if (!blank) {
                return end == line.length ? line : Arrays.copyOf(line, end);
            }
        }
    }

    private byte[] rawLine() throws IOException {
        byte[] line = new byte[0];
        int length = 0;
        while (true) {
            if (position == limit && !fill()) {
                return length == 0 ? null : Arrays.copyOf(line, length);
            }
            int end = position;
            while (end < limit && buffer[end] != '\n') {
                end++;
            }
            int n = end - position;
            if (length + n > line.length) {
                line = Arrays.copyOf(line, Math.max(length + n, 2 * line.length));
            }
            System.arraycopy(buffer, position, line, length, n);
            length += n;
            position = end;
            if (end < limit) {
                position++; // the newline
                return Arrays.copyOf(line, length);
            }
        }
    }

    private boolean fill() throws IOException {
        int n = in.read(buffer, 0, buffer.length);
        if (n <= 0) {
            return false;
        }
        position = 0;
        limit = n;
        return true;
    }

    /** Exactly {@code n} bytes: a frame's payload. */
    byte[] readPayload(int n) throws IOException {
        byte[] payload = new byte[n];
        int have = Math.min(n, limit - position);
        System.arraycopy(buffer, position, payload, 0, have);
        position += have;
        while (have < n) {
            int got = in.read(payload, have, n - have);
            if (got <= 0) {
                throw new EOFException("input ended " + (n - have) + " bytes into a " + n + "-byte payload");
            }
            have += got;
        }
        return payload;
    }

    /** The region at {@code path}, {@code size} bytes, mapped read-write; null if it cannot be. */
    static MappedByteBuffer map(Object path, Object size) {
        if (!(path instanceof String) || !(size instanceof Number) || ((Number) size).longValue() <= 0
                || ((Number) size).longValue() > Integer.MAX_VALUE) {
            return null;
        }
        try (FileChannel channel = FileChannel.open(Path.of((String) path), StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            return channel.size() < ((Number) size).longValue() ? null
                    : channel.map(FileChannel.MapMode.READ_WRITE, 0, ((Number) size).longValue());
        } catch (IOException | RuntimeException ex) {
            System.err.println("shared framing not chosen: " + ex);
            return null;
        }
    }

    /** A payload of {@code n} bytes at {@code at} in the region, copied out; null if it lies outside. */
    byte[] fromRegion(long at, int n) {
        if (region == null || at < 0 || at + n > region.capacity()) {
            return null;
        }
        byte[] payload = new byte[n];
        region.get((int) at, payload);
        return payload;
    }

    /** Writes one reply in the current framing and flushes it. */
    void write(Map<String, Object> reply) throws IOException {
        write(reply, -1, -1);
    }

    /**
     * Writes one reply in the current framing and flushes it; in shared framing its payload goes
     * into the {@code room} bytes at {@code at} of the region if it fits there (at, room: -1 for none).
     */
    void write(Map<String, Object> reply, long at, long room) throws IOException {
        Map<String, Object> holder = holderOf(reply);
        byte[] payload = holder == null ? null : (byte[]) holder.get("data");
        boolean placed = false;
        if (payload != null && binary) {
            holder.remove("data");
            reply.put("payload", payload.length);
            if (region != null && at >= 0 && payload.length <= room && at + room <= region.capacity()) {
                region.put((int) at, payload);
                reply.put("at", at);
                placed = true;
            }
        } else if (payload != null) {
            holder.put("data", Base64.getEncoder().encodeToString(payload));
        }
        out.write(Json.write(reply).getBytes(StandardCharsets.UTF_8));
        out.write('\n');
        if (payload != null && binary && !placed) {
            out.write(payload);
        }
        out.flush();
    }

    /** The map that carries a message's binary field: the message itself, or its chunk. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> holderOf(Map<String, Object> message) {
        if (message.get("data") instanceof byte[]) {
            return message;
        }
        Object chunk = message.get("chunk");
        if (chunk instanceof Map && ((Map<String, Object>) chunk).get("data") instanceof byte[]) {
            return (Map<String, Object>) chunk;
        }
        return null;
    }
}
