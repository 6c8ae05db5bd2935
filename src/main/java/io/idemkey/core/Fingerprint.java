package io.idemkey.core;

import jakarta.json.spi.JsonProvider;
import jakarta.json.stream.JsonGenerator;
import jakarta.json.stream.JsonGeneratorFactory;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;

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
 * <p>By default the JSON is read straight from its UTF-8 bytes by a tokenizer written for this
 * canonical form ({@code JsonBytesReader}); {@link #Fingerprint(JsonProvider)} reads it through
 * JSON-P instead ({@code JsonPReader}, the reference the tokenizer is held equal to: same value or
 * the same refusal, for any input). Both feed the same encoder ({@code CanonicalEncoder}).
 * Thread-safe.
 */
public final class Fingerprint {

    /** Deeper JSON is hashed as raw bytes (and the application's reader decides what it means). */
    public static final int MAX_JSON_DEPTH = 128;

    private static final byte[] VERSION = "idemkey-fingerprint-2".getBytes(StandardCharsets.US_ASCII);
    /** By name only, and stable: the values of one parameter keep their order (they bind to a List). */
    private static final Comparator<Map.Entry<String, String>> QUERY_ORDER = Map.Entry.comparingByKey();

    private final MessageDigest sha256 = newSha256();
    /** The JSON-P path, or null: the byte tokenizer. */
    private final JsonPReader jsonP;
    /** Only for {@link #canonicalJson}; looked up when first needed. */
    private volatile JsonGeneratorFactory generators;

    /** Reads JSON with the byte tokenizer ({@code JsonBytesReader}). */
    public Fingerprint() {
        this.jsonP = null;
    }

    /** Reads JSON through JSON-P's streaming parser: the reference path (same fingerprints, slower). */
    public Fingerprint(JsonProvider json) {
        this.jsonP = new JsonPReader(json.createParserFactory(Map.of()));
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
        GrowableBytes canonical = jsonEntity ? canonicalOrNull(entity, excludeFields) : null;
        if (canonical != null) {
            digest.update((byte) 'J');
            digest.update(canonical.array, 0, canonical.size);
        } else {
            digest.update((byte) 'R');
            digest.update(entity);
        }
        return digest.digest();
    }

    /** The canonical form of a JSON document as text; for tests and diagnostics. */
    public String canonicalJson(byte[] json, Set<String> excludeFields) {
        GrowableBytes canonical = canonicalOrNull(json, excludeFields);
        if (canonical == null) {
            return null;
        }
        if (generators == null) {
            generators = JsonProvider.provider().createGeneratorFactory(Map.of());
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (JsonGenerator generator = generators.createGenerator(out, StandardCharsets.UTF_8)) {
            CanonicalJsonText.write(canonical, generator);
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    /** The document's canonical encoding, or null if it is not usable JSON (then the raw bytes are hashed). */
    private GrowableBytes canonicalOrNull(byte[] json, Set<String> excludeFields) {
        if (json.length == 0) {
            return null;
        }
        return jsonP == null ? JsonBytesReader.canonicalOrNull(json, excludeFields) : jsonP.canonicalOrNull(json, excludeFields);
    }

    /** {@link CanonicalNumbers#isPlainDecimal}, where the fingerprint's tests reach it. */
    static boolean isPlainDecimal(String number) {
        return CanonicalNumbers.isPlainDecimal(number);
    }

    /** {@link Utf16Order#compare}, where the fingerprint's tests reach it. */
    static int compareAsStrings(byte[] a, int aFrom, int aLength, byte[] b, int bFrom, int bLength) {
        return Utf16Order.compare(a, aFrom, aLength, b, bFrom, bLength);
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
}
