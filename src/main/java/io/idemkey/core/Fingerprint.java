package io.idemkey.core;

import jakarta.json.spi.JsonProvider;
import jakarta.json.stream.JsonGenerator;
import jakarta.json.stream.JsonGeneratorFactory;
import jakarta.json.stream.JsonParser;
import jakarta.json.stream.JsonParserFactory;

import java.io.ByteArrayOutputStream;
import java.io.CharArrayReader;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The SHA-256 fingerprint of a request: its method, path, query parameters (sorted) and entity. It
 * tells a retry (same fingerprint) from a different request that reuses a key (422).
 *
 * <p>A JSON entity is parsed into its canonical form (members sorted, white space gone, numbers
 * without trailing zeros) with the policy's excluded members removed at every depth, so bodies that
 * differ only in member order, spacing or excluded fields fingerprint the same. What is hashed is a
 * tagged, length-prefixed encoding of that form ({@link #canonicalJson} shows it as JSON). An
 * entity that is not JSON, does not parse, repeats a member name or nests deeper than
 * {@link #MAX_JSON_DEPTH} is hashed as raw bytes: a body never makes fingerprinting fail.
 *
 * <p>JSON goes through JSON-P, the streaming layer of JSON-B that every Jakarta EE server ships.
 * Thread-safe.
 */
public final class Fingerprint {

    /** Deeper JSON is hashed as raw bytes (and the application's reader decides what it means). */
    public static final int MAX_JSON_DEPTH = 128;

    private static final byte[] VERSION = "idemkey-fingerprint-2".getBytes(StandardCharsets.US_ASCII);
    /** By name only, and stable: the values of one parameter keep their order (they bind to a List). */
    private static final Comparator<Map.Entry<String, String>> QUERY_ORDER = Map.Entry.comparingByKey();

    private final MessageDigest sha256 = newSha256();
    private final JsonParserFactory parsers;
    private final JsonGeneratorFactory generators;

    public Fingerprint() {
        this(JsonProvider.provider());
    }

    public Fingerprint(JsonProvider json) {
        this.parsers = json.createParserFactory(Map.of());
        this.generators = json.createGeneratorFactory(Map.of());
    }

    /**
     * @param method        the HTTP method
     * @param path          the request path relative to the application root, percent-encoded, one leading {@code /}
     * @param query         the query parameters, percent-encoded; the order of names does not matter, the
     *                      order of one name's values does
     * @param jsonEntity    whether the entity's media type is JSON ({@code application/json}, {@code +json})
     * @param entity        the entity bytes (empty when there is none)
     * @param excludeFields lower-cased JSON member names to leave out
     * @return the 32-byte SHA-256 digest
     */
    public byte[] of(String method, String path, List<Map.Entry<String, String>> query, boolean jsonEntity,
                     byte[] entity, Set<String> excludeFields) {
        MessageDigest digest = sha256();
        digest.update(VERSION);
        field(digest, method);
        field(digest, path);
        List<Map.Entry<String, String>> sorted = new ArrayList<>(query);
        sorted.sort(QUERY_ORDER);
        length(digest, sorted.size());
        for (Map.Entry<String, String> parameter : sorted) {
            field(digest, parameter.getKey());
            field(digest, parameter.getValue());
        }
        Object canonical = jsonEntity ? parseOrNull(entity, excludeFields) : null;
        if (canonical != null) {
            digest.update((byte) 'J');
            Bytes tree = new Bytes(Math.max(64, entity.length));
            encode(canonical, tree);
            digest.update(tree.array, 0, tree.size);
        } else {
            digest.update((byte) 'R');
            digest.update(entity);
        }
        return digest.digest();
    }

    /** The canonical form of a JSON document as text; for tests and diagnostics. */
    public String canonicalJson(byte[] json, Set<String> excludeFields) {
        Object canonical = parseOrNull(json, excludeFields);
        if (canonical == null) {
            return null;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (JsonGenerator generator = generators.createGenerator(out, StandardCharsets.UTF_8)) {
            write(generator, canonical);
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    /**
     * The canonical tree as the bytes that are hashed: a tagged, length-prefixed encoding (objects
     * with their members sorted), so two trees hash the same exactly when they are equal. Cheaper
     * than writing JSON text, which only a human needs ({@link #canonicalJson}).
     */
    @SuppressWarnings("unchecked")
    private static void encode(Object value, Bytes out) {
        if (value instanceof Map<?, ?> map) {
            out.write('{');
            length(out, map.size());
            for (Map.Entry<String, Object> member : ((Map<String, Object>) map).entrySet()) {
                text(out, member.getKey());
                encode(member.getValue(), out);
            }
        } else if (value instanceof List<?> list) {
            out.write('[');
            length(out, list.size());
            for (Object element : list) {
                encode(element, out);
            }
        } else if (value instanceof String string) {
            out.write('"');
            text(out, string);
        } else if (value instanceof Long number) {
            out.write('i');
            long n = number;
            for (int shift = 56; shift >= 0; shift -= 8) {
                out.write((int) (n >>> shift));
            }
        } else if (value instanceof BigDecimal number) {
            out.write('d');
            text(out, number.toString());
        } else if (value instanceof Boolean bool) {
            out.write(bool ? 't' : 'f');
        } else {
            out.write('n');
        }
    }

    private static void text(Bytes out, String value) {
        if (out.writeAscii(value)) {
            return;
        }
        byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
        length(out, utf8.length);
        out.write(utf8);
    }

    /** A growable byte array without ByteArrayOutputStream's per-byte locking. */
    private static final class Bytes {
        private byte[] array;
        private int size;

        Bytes(int capacity) {
            array = new byte[capacity];
        }

        void write(int b) {
            if (size == array.length) {
                array = Arrays.copyOf(array, size * 2);
            }
            array[size++] = (byte) b;
        }

        /** Length and bytes of an ASCII string without encoding it first; false (nothing written) if it is not ASCII. */
        boolean writeAscii(String value) {
            int length = value.length();
            if (size + length + 4 > array.length) {
                array = Arrays.copyOf(array, Math.max(size * 2, size + length + 4));
            }
            int at = size + 4;
            for (int i = 0; i < length; i++) {
                char c = value.charAt(i);
                if (c >= 0x80) {
                    return false;
                }
                array[at++] = (byte) c;
            }
            array[size] = (byte) (length >>> 24);
            array[size + 1] = (byte) (length >>> 16);
            array[size + 2] = (byte) (length >>> 8);
            array[size + 3] = (byte) length;
            size = at;
            return true;
        }

        void write(byte[] bytes) {
            if (size + bytes.length > array.length) {
                array = Arrays.copyOf(array, Math.max(size * 2, size + bytes.length));
            }
            System.arraycopy(bytes, 0, array, size, bytes.length);
            size += bytes.length;
        }
    }

    private static void length(Bytes out, int length) {
        out.write(length >>> 24);
        out.write(length >>> 16);
        out.write(length >>> 8);
        out.write(length);
    }

    /** The document as a tree of sorted maps, lists and scalars; null if it is not usable JSON. */
    private Object parseOrNull(byte[] json, Set<String> excludeFields) {
        if (json.length == 0) {
            return null;
        }
        CharBuffer text = strictUtf8(json);
        if (text == null) {
            return null;
        }
        try (JsonParser parser = parsers.createParser(new CharArrayReader(text.array(), text.arrayOffset(), text.limit()))) {
            Object root = read(parser, parser.next(), 0, excludeFields);
            return parser.hasNext() ? null : root;
        } catch (RuntimeException e) {
            // NotCanonicalizable, any JsonException, a number beyond BigDecimal: hash the raw bytes
            return null;
        }
    }

    private Object read(JsonParser parser, JsonParser.Event event, int depth, Set<String> excludeFields) {
        switch (event) {
            case START_OBJECT -> {
                checkDepth(depth);
                TreeMap<String, Object> members = new TreeMap<>();
                for (JsonParser.Event next = parser.next(); next != JsonParser.Event.END_OBJECT; next = parser.next()) {
                    String name = checked(parser.getString());
                    // An excluded value is still read (not skipped): a truncated one must fail, not hang.
                    Object value = read(parser, parser.next(), depth + 1, excludeFields);
                    if (!excluded(name, excludeFields) && members.put(name, value) != null) {
                        throw new NotCanonicalizable(); // a repeated member: keep the raw bytes
                    }
                }
                return members;
            }
            case START_ARRAY -> {
                checkDepth(depth);
                List<Object> elements = new ArrayList<>();
                for (JsonParser.Event next = parser.next(); next != JsonParser.Event.END_ARRAY; next = parser.next()) {
                    elements.add(read(parser, next, depth + 1, excludeFields));
                }
                return elements;
            }
            case VALUE_STRING -> {
                return checked(parser.getString());
            }
            case VALUE_NUMBER -> {
                // most numbers are plain integers: canonical already, and a long is cheaper than a BigDecimal
                String lexeme = parser.getString();
                if (isPlainInteger(lexeme)) {
                    return Long.parseLong(lexeme);
                }
                BigDecimal number = parser.getBigDecimal().stripTrailingZeros();
                return number.scale() <= 0 && number.precision() - number.scale() <= 18 ? (Object) number.longValueExact() : number;
            }
            case VALUE_TRUE -> {
                return Boolean.TRUE;
            }
            case VALUE_FALSE -> {
                return Boolean.FALSE;
            }
            case VALUE_NULL -> {
                return JsonNull.INSTANCE;
            }
            default -> throw new NotCanonicalizable();
        }
    }

    /** Decoders replace malformed bytes silently; two different bodies must never read the same. */
    private static CharBuffer strictUtf8(byte[] bytes) {
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes));
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    /** Case-insensitive, without lower-casing every member name of every body. */
    private static boolean excluded(String name, Set<String> excludeFields) {
        for (String field : excludeFields) {
            if (field.length() == name.length() && field.equalsIgnoreCase(name)) {
                return true;
            }
        }
        return false;
    }

    /** Digits with an optional minus, no leading zero: already canonical (most numbers are). */
    private static boolean isPlainInteger(String number) {
        int start = number.startsWith("-") ? 1 : 0;
        if (number.length() == start || number.length() - start > 18 || (number.charAt(start) == '0' && number.length() > start + 1)) {
            return false;
        }
        for (int i = start; i < number.length(); i++) {
            char c = number.charAt(i);
            if (c < '0' || c > '9') {
                return false;
            }
        }
        return !number.equals("-0");
    }

    /**
     * A string with an unpaired surrogate (an escape such as {@code \ud800}) has no UTF-8 form: the
     * generator would write {@code ?}, and two different bodies would read the same.
     */
    private static String checked(String value) {
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < value.length() && Character.isLowSurrogate(value.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                throw new NotCanonicalizable();
            }
        }
        return value;
    }

    private static void checkDepth(int depth) {
        if (depth >= MAX_JSON_DEPTH) {
            throw new NotCanonicalizable();
        }
    }

    @SuppressWarnings("unchecked")
    private static void write(JsonGenerator generator, Object value) {
        if (value instanceof Map<?, ?> map) {
            generator.writeStartObject();
            for (Map.Entry<String, Object> member : ((Map<String, Object>) map).entrySet()) {
                generator.writeKey(member.getKey());
                write(generator, member.getValue());
            }
            generator.writeEnd();
        } else if (value instanceof List<?> list) {
            generator.writeStartArray();
            for (Object element : list) {
                write(generator, element);
            }
            generator.writeEnd();
        } else if (value instanceof String string) {
            generator.write(string);
        } else if (value instanceof Long number) {
            generator.write(number.longValue());
        } else if (value instanceof BigDecimal number) {
            generator.write(number);
        } else if (value instanceof Boolean bool) {
            generator.write(bool);
        } else {
            generator.writeNull();
        }
    }

    private static void field(MessageDigest digest, String value) {
        byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
        length(digest, bytes.length);
        digest.update(bytes);
    }

    private static void length(MessageDigest digest, int length) {
        digest.update((byte) (length >>> 24));
        digest.update((byte) (length >>> 16));
        digest.update((byte) (length >>> 8));
        digest.update((byte) length);
    }

    /** A fresh digest: cloning a prototype skips the provider lookup of getInstance on every request. */
    private MessageDigest sha256() {
        try {
            return (MessageDigest) sha256.clone();
        } catch (CloneNotSupportedException e) {
            return newSha256();
        }
    }

    private static MessageDigest newSha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }

    private enum JsonNull { INSTANCE }

    /** The entity is valid JSON but has no single canonical form here (repeated member, too deep). */
    private static final class NotCanonicalizable extends RuntimeException {
        private static final long serialVersionUID = 1L;

        NotCanonicalizable() {
            super(null, null, false, false);
        }
    }
}
