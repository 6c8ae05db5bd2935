package io.idemkey.core;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.zip.DataFormatException;
import java.util.zip.Deflater;
import java.util.zip.Inflater;

/**
 * The compact binary form in which a {@link StoredResponse} is kept in a store:
 * <pre>
 * version (1 byte) | flags (1 byte: 1 = body deflated) | status (2 bytes) | header count (1 byte)
 * header: name code (1 byte, 0 = name follows) [name] value code (1 byte, 0 = value follows) [value]
 *         -- strings: length (2 bytes) + UTF-8
 * body: the remaining bytes, deflated (raw DEFLATE) when larger than {@value #COMPRESS_ABOVE} bytes
 *       and smaller that way
 * </pre>
 * Common header names and values take one byte; a record for a small JSON answer costs little more
 * than its body.
 */
public final class StoredResponseCodec {

    /**
     * Bodies above this many bytes are compressed (when that makes them smaller): even a 200-byte
     * JSON answer saves a size class of Redis's allocator that way.
     */
    public static final int COMPRESS_ABOVE = 128;

    private static final int VERSION = 2;
    private static final int DEFLATED = 1;
    private static final int MAX_HEADERS = 255;
    /** Common header values: one byte instead of the text (a small record stays small in Redis). */
    private static final List<String> KNOWN_VALUES = List.of("application/json", "application/problem+json",
            "text/plain", "application/json;charset=UTF-8", "text/plain;charset=UTF-8", "application/xml",
            "text/html", "text/html;charset=UTF-8", "application/octet-stream");
    private static final List<String> KNOWN_NAMES = List.of(
            "Content-Type", "Location", "Content-Location", "ETag", "Last-Modified", "Content-Language");

    /** Deflaters kept for reuse: at most as many as compress at once, up to a few per core. */
    private static final Queue<Deflater> DEFLATERS =
            new ArrayBlockingQueue<>(Math.max(4, 2 * Runtime.getRuntime().availableProcessors()));

    private StoredResponseCodec() {
    }

    public static byte[] encode(StoredResponse response) {
        List<StoredResponse.Header> headers = response.headers();
        if (headers.size() > MAX_HEADERS) {
            throw new IllegalArgumentException("more than " + MAX_HEADERS + " headers to record");
        }
        byte[] body = response.body();
        byte[] deflated = body.length > COMPRESS_ABOVE ? deflateIfSmaller(body) : null;
        boolean compressed = deflated != null;
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(64 + body.length);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeByte(VERSION);
            out.writeByte(compressed ? DEFLATED : 0);
            out.writeShort(response.status());
            out.writeByte(headers.size());
            for (StoredResponse.Header header : headers) {
                int code = KNOWN_NAMES.indexOf(header.name()) + 1;
                out.writeByte(code);
                if (code == 0) {
                    writeString(out, header.name());
                }
                int valueCode = KNOWN_VALUES.indexOf(header.value()) + 1;
                out.writeByte(valueCode);
                if (valueCode == 0) {
                    writeString(out, header.value());
                }
            }
            out.write(compressed ? deflated : body);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    /** @throws IllegalArgumentException if the bytes are not a response this codec wrote */
    public static StoredResponse decode(byte[] encoded) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(encoded))) {
            int version = in.readUnsignedByte();
            if (version != VERSION) {
                throw new IllegalArgumentException("unknown record version " + version);
            }
            boolean compressed = (in.readUnsignedByte() & DEFLATED) != 0;
            int status = in.readUnsignedShort();
            int count = in.readUnsignedByte();
            List<StoredResponse.Header> headers = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                int code = in.readUnsignedByte();
                String name = code == 0 ? readString(in) : KNOWN_NAMES.get(code - 1);
                int valueCode = in.readUnsignedByte();
                headers.add(new StoredResponse.Header(name, valueCode == 0 ? readString(in) : KNOWN_VALUES.get(valueCode - 1)));
            }
            byte[] rest = in.readAllBytes();
            return new StoredResponse(status, headers, compressed ? inflate(rest) : rest);
        } catch (IOException | IndexOutOfBoundsException e) {
            throw new IllegalArgumentException("corrupt stored response", e);
        }
    }

    private static void writeString(DataOutputStream out, String value) throws IOException {
        byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
        if (utf8.length > 0xffff) {
            throw new IllegalArgumentException("header longer than 65535 bytes");
        }
        out.writeShort(utf8.length);
        out.write(utf8);
    }

    private static String readString(DataInputStream in) throws IOException {
        byte[] utf8 = new byte[in.readUnsignedShort()];
        in.readFully(utf8);
        return new String(utf8, StandardCharsets.UTF_8);
    }

    /**
     * The body deflated, if that makes it smaller; null otherwise. It deflates into a buffer one
     * byte smaller than the body, and gives up when that is not enough. Deflaters are reused: each
     * holds a few hundred KB of native memory that takes longer to set up than a small body to compress.
     */
    private static byte[] deflateIfSmaller(byte[] body) {
        Deflater deflater = DEFLATERS.poll();
        if (deflater == null) {
            deflater = new Deflater(Deflater.DEFAULT_COMPRESSION, true);
        }
        try {
            deflater.setInput(body);
            deflater.finish();
            byte[] out = new byte[body.length - 1];
            int length = 0;
            while (!deflater.finished() && length < out.length) {
                length += deflater.deflate(out, length, out.length - length);
            }
            return deflater.finished() ? Arrays.copyOf(out, length) : null;
        } finally {
            deflater.reset();
            if (!DEFLATERS.offer(deflater)) {
                deflater.end();
            }
        }
    }

    private static byte[] inflate(byte[] deflated) {
        Inflater inflater = new Inflater(true);
        try {
            inflater.setInput(deflated);
            ByteArrayOutputStream out = new ByteArrayOutputStream(deflated.length * 4);
            byte[] buffer = new byte[8192];
            while (!inflater.finished()) {
                int n = inflater.inflate(buffer);
                if (n == 0 && (inflater.needsInput() || inflater.needsDictionary())) {
                    throw new IllegalArgumentException("truncated compressed body");
                }
                out.write(buffer, 0, n);
            }
            return out.toByteArray();
        } catch (DataFormatException e) {
            throw new IllegalArgumentException("corrupt compressed body", e);
        } finally {
            inflater.end();
        }
    }
}
