package io.idemkey.core;

import jakarta.json.spi.JsonProvider;
import jakarta.json.stream.JsonGenerator;
import jakarta.json.stream.JsonGeneratorFactory;
import jakarta.json.stream.JsonParser;
import jakarta.json.stream.JsonParserFactory;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.StringReader;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.security.DigestOutputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The SHA-256 fingerprint of a request: its method, path, query parameters (sorted) and entity. It
 * tells a retry (same fingerprint) from a different request that reuses a key (422).
 *
 * <p>A JSON entity is parsed and written canonically (members sorted, no insignificant white space,
 * numbers without trailing zeros) with the policy's excluded members removed at every depth, so
 * bodies that differ only in member order, spacing or excluded fields fingerprint the same. An
 * entity that is not JSON, does not parse, repeats a member name or nests deeper than
 * {@link #MAX_JSON_DEPTH} is hashed as raw bytes: a body never makes fingerprinting fail.
 *
 * <p>JSON goes through JSON-P, the streaming layer of JSON-B that every Jakarta EE server ships.
 * Thread-safe.
 */
public final class Fingerprint {

    /** Deeper JSON is hashed as raw bytes (and the application's reader decides what it means). */
    public static final int MAX_JSON_DEPTH = 128;

    private static final byte[] VERSION = "idemkey-fingerprint-1".getBytes(StandardCharsets.US_ASCII);
    /** By name only, and stable: the values of one parameter keep their order (they bind to a List). */
    private static final Comparator<Map.Entry<String, String>> QUERY_ORDER = Map.Entry.comparingByKey();

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
            writeCanonical(canonical, digest);
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

    private void writeCanonical(Object canonical, MessageDigest digest) {
        OutputStream sink = new DigestOutputStream(OutputStream.nullOutputStream(), digest);
        try (JsonGenerator generator = generators.createGenerator(sink, StandardCharsets.UTF_8)) {
            write(generator, canonical);
        }
    }

    /** The document as a tree of sorted maps, lists and scalars; null if it is not usable JSON. */
    private Object parseOrNull(byte[] json, Set<String> excludeFields) {
        if (json.length == 0) {
            return null;
        }
        String text = strictUtf8(json);
        if (text == null) {
            return null;
        }
        try (JsonParser parser = parsers.createParser(new StringReader(text))) {
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
                    if (!excludeFields.contains(name.toLowerCase(Locale.ROOT)) && members.put(name, value) != null) {
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
                return parser.getBigDecimal().stripTrailingZeros();
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
    private static String strictUtf8(byte[] bytes) {
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes))
                    .toString();
        } catch (CharacterCodingException e) {
            return null;
        }
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

    private static MessageDigest sha256() {
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
