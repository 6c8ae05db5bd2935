package io.idemkey.core;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import javax.crypto.Cipher;
import javax.crypto.SecretKey;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * AES-256-GCM for stored records (JDK only): a fresh random 96-bit nonce per record, a 128-bit tag,
 * and associated data chosen by the caller (the record's header and its store key, so that a record
 * copied under another key, or with another status, does not decrypt). Keys have ids: the first key
 * encrypts, every key decrypts (rotation: add the new key last on every instance, then move it to
 * the front, and drop the old one once every record it sealed has expired: docs/security.md). Thread-safe. {@link #toString()} shows the key ids, never the keys.
 */
public final class RecordCipher {

    /** Nonce length: 96 bits, GCM's native size (no GHASH of the nonce). */
    public static final int NONCE_BYTES = 12;
    /** Tag length: 128 bits. */
    public static final int TAG_BYTES = 16;
    private static final Pattern KEY_ID = Pattern.compile("[A-Za-z0-9._-]{1,32}");
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Map<String, SecretKey> keys;
    private final String currentId;

    private RecordCipher(Map<String, SecretKey> keys) {
        this.keys = Collections.unmodifiableMap(keys);
        this.currentId = keys.keySet().iterator().next();
    }

    /**
     * Reads {@code <id>:<base64 of 32 bytes>[,<id>:<base64>...]}.
     *
     * @throws IllegalArgumentException saying what is wrong, never quoting a key
     */
    public static RecordCipher parse(String spec) {
        Map<String, SecretKey> keys = new LinkedHashMap<>();
        int index = 0;
        for (String entry : spec.split(",", -1)) {
            index++;
            String trimmed = entry.trim();
            int colon = trimmed.indexOf(':');
            if (colon < 0) {
                throw new IllegalArgumentException("entry " + index + " is not <id>:<base64 of 32 bytes>");
            }
            String id = trimmed.substring(0, colon).trim();
            if (!KEY_ID.matcher(id).matches()) {
                throw new IllegalArgumentException("entry " + index + ": the key id must be 1 to 32 of A-Z a-z 0-9 . _ -");
            }
            byte[] key;
            try {
                key = Base64.getDecoder().decode(trimmed.substring(colon + 1).trim());
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("the key '" + id + "' is not valid base64");
            }
            if (key.length != 32) {
                throw new IllegalArgumentException("the key '" + id + "' has " + key.length
                        + " bytes; AES-256 needs exactly 32 (e.g. openssl rand -base64 32)");
            }
            if (keys.put(id, new SecretKeySpec(key, "AES")) != null) {
                throw new IllegalArgumentException("the key id '" + id + "' appears twice");
            }
        }
        return new RecordCipher(keys);
    }

    /** The id of the key that encrypts. */
    public String currentKeyId() {
        return currentId;
    }

    public Set<String> keyIds() {
        return keys.keySet();
    }

    public boolean knows(String keyId) {
        return keys.containsKey(keyId);
    }

    /** {@code nonce | ciphertext | tag} of {@code plain} under the current key. */
    public byte[] encrypt(byte[] plain, byte[] associatedData) {
        byte[] out = new byte[NONCE_BYTES + plain.length + TAG_BYTES];
        byte[] nonce = new byte[NONCE_BYTES];
        RANDOM.nextBytes(nonce);
        System.arraycopy(nonce, 0, out, 0, NONCE_BYTES);
        try {
            Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
            cipher.init(Cipher.ENCRYPT_MODE, keys.get(currentId), new GCMParameterSpec(TAG_BYTES * 8, nonce));
            cipher.updateAAD(associatedData);
            cipher.doFinal(plain, 0, plain.length, out, NONCE_BYTES);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-GCM is not usable on this JVM", e);
        }
        return out;
    }

    /**
     * The plain bytes of {@code sealed} ({@code nonce | ciphertext | tag}) under the key {@code keyId}.
     *
     * @throws IllegalArgumentException if the key is unknown, or the bytes or the associated data were
     *                                  changed (the tag does not match)
     */
    public byte[] decrypt(String keyId, byte[] sealed, int offset, byte[] associatedData) {
        SecretKey key = keys.get(keyId);
        if (key == null) {
            throw new IllegalArgumentException("no key '" + keyId + "' configured");
        }
        if (sealed.length - offset < NONCE_BYTES + TAG_BYTES) {
            throw new IllegalArgumentException("sealed record too short");
        }
        try {
            Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
            cipher.init(Cipher.DECRYPT_MODE, key, new GCMParameterSpec(TAG_BYTES * 8, sealed, offset, NONCE_BYTES));
            cipher.updateAAD(associatedData);
            return cipher.doFinal(sealed, offset + NONCE_BYTES, sealed.length - offset - NONCE_BYTES);
        } catch (javax.crypto.AEADBadTagException e) {
            throw new IllegalArgumentException("the record does not authenticate (changed, or moved from another key)");
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("the record cannot be decrypted: " + e.getMessage());
        }
    }

    @Override
    public String toString() {
        return "AES-256-GCM keys " + keys.keySet() + " (encrypting with '" + currentId + "')";
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
