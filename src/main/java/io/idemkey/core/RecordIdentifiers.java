package io.idemkey.core;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.Arrays;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * What identifies a record in the store: its store key and the fingerprint it keeps of its request.
 *
 * <p>{@link #PLAIN}: the store key is the record key itself (prefix, escaped scope, escaped client
 * key: readable in {@code redis-cli}) and the fingerprint the first 16 bytes of the request's
 * {@link Fingerprint}. Hashed: the store key is the prefix, then {@value #HASHED_MARKER} and the
 * HMAC-SHA-256 (base64url, 43 characters) of everything after the prefix, so the store holds neither
 * the caller's name nor the client's key, and nobody without the identifier key can tell which key
 * a record belongs to or test a guess. What follows the prefix in a record key never holds {@code =}
 * ({@link RecordKey} escapes it), so a hashed store key can never equal a plain one, whatever the
 * caller or key: while records from before are still read under their plain keys, no caller reaches
 * another's record that way.
 * The prefix stays, so ACLs by key pattern keep working; the hash has no {@code :}, {@code {},
 * {@code }} or {@code #}, so Redis Cluster hash tags and the rate limit's counter key (derived from
 * the store key) work as before. The fingerprint is then keyed too: the first 16 bytes of an
 * HMAC-SHA-256 of the store key and the request's fingerprint, under a key derived from the
 * identifier key, so the store cannot confirm a guessed request nor link equal requests under
 * different keys or callers.
 *
 * <p>The identifier key must not change while records live: a new one makes every record
 * unreachable, and retries run again.
 */
public final class RecordIdentifiers {

    public static final RecordIdentifiers PLAIN = new RecordIdentifiers(null, null, null, true);

    /** What follows the prefix in a hashed store key: {@code =} never follows the prefix in a plain record key. */
    public static final String HASHED_MARKER = "h=";
    /** The bytes of a stored fingerprint. */
    public static final int STORED_FINGERPRINT_BYTES = 16;
    /**
     * What the fingerprint key is derived from (HMAC-SHA-256 of this under the identifier key): it
     * holds a space, which no store key's HMAC input (an escaped record key) ever does.
     */
    private static final byte[] FINGERPRINT_KEY_LABEL = "idemkey stored fingerprint".getBytes(StandardCharsets.US_ASCII);

    private static final Base64.Encoder BASE64URL = Base64.getUrlEncoder().withoutPadding();

    private final String prefix;
    private final SecretKeySpec key;
    private final SecretKeySpec fingerprintKey;
    private final boolean logRawKeys;

    private RecordIdentifiers(String prefix, SecretKeySpec key, SecretKeySpec fingerprintKey, boolean logRawKeys) {
        this.prefix = prefix;
        this.key = key;
        this.fingerprintKey = fingerprintKey;
        this.logRawKeys = logRawKeys;
    }

    /**
     * @param prefix     the key prefix every record key starts with (kept readable)
     * @param hmacKey    32 or more bytes
     * @param logRawKeys whether decision logs still show the client's key (otherwise a short hash)
     */
    public static RecordIdentifiers hashed(String prefix, byte[] hmacKey, boolean logRawKeys) {
        if (hmacKey.length < 32) {
            throw new IllegalArgumentException("the identifier key has " + hmacKey.length + " bytes; at least 32 are needed");
        }
        SecretKeySpec key = new SecretKeySpec(hmacKey, "HmacSHA256");
        return new RecordIdentifiers(prefix, key, new SecretKeySpec(hmac(key, FINGERPRINT_KEY_LABEL), "HmacSHA256"),
                logRawKeys);
    }

    public boolean hashes() {
        return key != null;
    }

    /** The key the store keeps the record under. */
    public String storeKey(String recordKey) {
        if (key == null) {
            return recordKey;
        }
        boolean prefixed = recordKey.startsWith(prefix);
        String rest = prefixed ? recordKey.substring(prefix.length()) : recordKey;
        return (prefixed ? prefix : "") + HASHED_MARKER
                + BASE64URL.encodeToString(hmac(key, rest.getBytes(StandardCharsets.UTF_8)));
    }

    /**
     * The fingerprint the store keeps of a request under {@code storeKey}: the first
     * {@value #STORED_FINGERPRINT_BYTES} bytes of {@code requestFingerprint} (compared only with the
     * requests that reuse one key in one scope, that is far beyond any chance of a collision), or,
     * with hashed identifiers, of its HMAC with the store key.
     *
     * @param storeKey           {@link #storeKey} of the record
     * @param requestFingerprint the request's {@link Fingerprint}
     */
    public byte[] storedFingerprint(String storeKey, byte[] requestFingerprint) {
        if (fingerprintKey == null) {
            return requestFingerprint.length <= STORED_FINGERPRINT_BYTES ? requestFingerprint
                    : Arrays.copyOf(requestFingerprint, STORED_FINGERPRINT_BYTES);
        }
        byte[] storeKeyBytes = storeKey.getBytes(StandardCharsets.UTF_8);
        ByteBuffer input = ByteBuffer.allocate(4 + storeKeyBytes.length + requestFingerprint.length);
        input.putInt(storeKeyBytes.length).put(storeKeyBytes).put(requestFingerprint);
        return Arrays.copyOf(hmac(fingerprintKey, input.array()), STORED_FINGERPRINT_BYTES);
    }

    /**
     * What the decision log shows for the client's key: the key itself, or, with hashed identifiers,
     * the first 12 characters of the record's hash (enough to follow one key through the logs).
     */
    public String shownKey(String clientKey, String storeKey) {
        if (key == null || logRawKeys) {
            return clientKey;
        }
        return "h:" + storeKey.substring(storeKey.length() - 43, storeKey.length() - 31);
    }

    private static byte[] hmac(SecretKeySpec key, byte[] value) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(key);
            return mac.doFinal(value);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HMAC-SHA-256 is not usable on this JVM", e);
        }
    }

    @Override
    public String toString() {
        return key == null ? "plain" : "HMAC-SHA-256" + (logRawKeys ? " (raw keys logged)" : "");
    }
}
