package io.idemkey.config;

import io.idemkey.core.RecordCipher;
import io.idemkey.core.RecordCodec;
import io.idemkey.core.RecordIdentifiers;

import java.util.Base64;

/**
 * What the store may read of a record ({@code idempotency.encryption.*}, docs/security.md): the
 * record codec (encrypted or plain) and the store keys and fingerprints (hashed or plain). Validated at
 * deployment; with {@value #REQUIRED}, a missing or blank {@value #KEYS} fails it;
 * {@link #toString()} names key ids, never keys.
 *
 * @param codec       how records are encoded for the store
 * @param identifiers what the store's keys hold
 */
public record StoredDataProtection(RecordCodec codec, RecordIdentifiers identifiers, boolean readsRecordsFromBefore) {

    public static final String KEYS = "idempotency.encryption.keys";
    public static final String IDENTIFIER_KEY = "idempotency.encryption.identifier-key";
    public static final String READ_UNENCRYPTED = "idempotency.encryption.read-unencrypted";
    public static final String LOG_RAW_KEYS = "idempotency.encryption.log-raw-keys";
    public static final String REQUIRED = "idempotency.encryption.required";

    public static final StoredDataProtection NONE = new StoredDataProtection(RecordCodec.PLAIN, RecordIdentifiers.PLAIN, false);

    /**
     * The protection configured.
     *
     * @param keyPrefix {@code idempotency.key-prefix}, validated
     * @throws ConfigurationException naming the property whose value is wrong, never quoting a key
     */
    public static StoredDataProtection from(ConfigLookup config, String keyPrefix) {
        boolean required = config.get(REQUIRED).map(v -> Values.bool(REQUIRED, v)).orElse(false);
        if (required && config.get(KEYS).filter(v -> !v.isBlank()).isEmpty()) {
            // a secret that did not mount must not silently mean plain text
            throw new ConfigurationException(KEYS, "is not set or blank, but " + REQUIRED + "=true: records must be"
                    + " encrypted (<id>:<base64 of 32 bytes>[,<id>:<base64>...]; check that the secret holding it"
                    + " reaches the application)");
        }
        RecordCipher cipher = config.get(KEYS).filter(v -> !v.isBlank()).map(spec -> {
            try {
                return RecordCipher.parse(spec);
            } catch (IllegalArgumentException e) {
                throw new ConfigurationException(KEYS, "is invalid: " + e.getMessage()
                        + "; expected <id>:<base64 of 32 bytes>[,<id>:<base64>...]");
            }
        }).orElse(null);
        byte[] identifierKey = config.get(IDENTIFIER_KEY).filter(v -> !v.isBlank()).map(v -> {
            byte[] key;
            try {
                key = Base64.getDecoder().decode(v.trim());
            } catch (IllegalArgumentException e) {
                throw new ConfigurationException(IDENTIFIER_KEY, "is not valid base64");
            }
            if (key.length != 32) {
                throw new ConfigurationException(IDENTIFIER_KEY, "has " + key.length + " bytes; it must have exactly 32");
            }
            return key;
        }).orElse(null);
        if (cipher != null && identifierKey == null) {
            throw new ConfigurationException(IDENTIFIER_KEY, "must be set (base64 of 32 bytes, never rotated) when "
                    + KEYS + " is: encrypted records must not sit under readable callers and keys");
        }
        boolean readUnencrypted = config.get(READ_UNENCRYPTED).map(v -> Values.bool(READ_UNENCRYPTED, v)).orElse(false);
        boolean logRawKeys = config.get(LOG_RAW_KEYS).map(v -> Values.bool(LOG_RAW_KEYS, v)).orElse(false);
        return new StoredDataProtection(
                cipher == null ? RecordCodec.PLAIN : new RecordCodec(cipher, readUnencrypted),
                identifierKey == null ? RecordIdentifiers.PLAIN : RecordIdentifiers.hashed(keyPrefix, identifierKey, logRawKeys),
                // records from before: plain ones under a cipher, and any under plain keys once keys are hashed
                readUnencrypted && (cipher != null || identifierKey != null));
    }

    @Override
    public String toString() {
        return "records " + codec + ", store keys " + identifiers;
    }
}
