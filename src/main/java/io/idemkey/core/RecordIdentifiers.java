package io.idemkey.core;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * What a record's store key holds. {@link #PLAIN}: the record key itself (prefix, escaped scope,
 * escaped client key: readable in {@code redis-cli}). Hashed: the prefix, then {@code h:} and the
 * HMAC-SHA-256 (base64url, 43 characters) of everything after the prefix, so the store holds neither
 * the caller's name nor the client's key, and nobody without the identifier key can tell which key
 * a record belongs to or test a guess. The prefix stays, so ACLs by key pattern keep working; the
 * hash has no {@code :}, {@code {}, {@code }} or {@code #}, so Redis Cluster hash tags and the rate
 * limit's counter key (derived from the store key) work as before.
 *
 * <p>The identifier key must not change while records live: a new one makes every record
 * unreachable, and retries run again.
 */
public final class RecordIdentifiers {

    public static final RecordIdentifiers PLAIN = new RecordIdentifiers(null, null, true);

    private static final Base64.Encoder BASE64URL = Base64.getUrlEncoder().withoutPadding();

    private final String prefix;
    private final SecretKeySpec key;
    private final boolean logRawKeys;

    private RecordIdentifiers(String prefix, SecretKeySpec key, boolean logRawKeys) {
        this.prefix = prefix;
        this.key = key;
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
        return new RecordIdentifiers(prefix, new SecretKeySpec(hmacKey, "HmacSHA256"), logRawKeys);
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
        return (prefixed ? prefix : "") + "h:" + BASE64URL.encodeToString(hmac(rest));
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

    private byte[] hmac(String value) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(key);
            return mac.doFinal(value.getBytes(StandardCharsets.UTF_8));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HMAC-SHA-256 is not usable on this JVM", e);
        }
    }

    @Override
    public String toString() {
        return key == null ? "plain" : "HMAC-SHA-256" + (logRawKeys ? " (raw keys logged)" : "");
    }
}
