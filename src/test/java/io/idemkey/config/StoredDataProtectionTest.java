package io.idemkey.config;

import org.junit.jupiter.api.Test;

import java.util.Base64;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code idempotency.encryption.*}: a bad value fails deployment naming the property, never quoting a key. */
class StoredDataProtectionTest {

    private static final String KEY = Base64.getEncoder().encodeToString(new byte[32]);

    private static IdempotencySettings settings(Map<String, String> values) {
        return IdempotencySettings.from(ConfigLookup.of(values));
    }

    private static void refused(String property, Map<String, String> values) {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> settings(values));
        assertEquals(property, e.property(), e.getMessage());
        assertFalse(e.getMessage().contains(KEY), e.getMessage());
    }

    @Test
    void badKeysFailNamingTheProperty() {
        String keys = StoredDataProtection.KEYS;
        String id = StoredDataProtection.IDENTIFIER_KEY;
        refused(keys, Map.of("idempotency.store", "memory", keys, "a:" + Base64.getEncoder().encodeToString(new byte[31]), id, KEY));
        refused(keys, Map.of("idempotency.store", "memory", keys, "a:%%%", id, KEY));
        refused(keys, Map.of("idempotency.store", "memory", keys, "a:" + KEY + ",a:" + KEY, id, KEY));
        refused(id, Map.of("idempotency.store", "memory", keys, "a:" + KEY));
        refused(id, Map.of("idempotency.store", "memory", keys, "a:" + KEY, id, "short"));
        refused(StoredDataProtection.READ_UNENCRYPTED, Map.of("idempotency.store", "memory", keys, "a:" + KEY, id, KEY,
                StoredDataProtection.READ_UNENCRYPTED, "maybe"));
    }

    /** A secret that did not mount (a blank or missing key setting) fails deployment where encryption is required. */
    @Test
    void withEncryptionRequiredABlankOrMissingKeySettingFailsNamingIt() {
        String keys = StoredDataProtection.KEYS;
        String required = StoredDataProtection.REQUIRED;
        for (Map<String, String> values : java.util.List.of(
                Map.of("idempotency.store", "memory", required, "true"),
                Map.of("idempotency.store", "memory", required, "true", keys, "  "),
                Map.of("idempotency.store", "memory", required, "true", keys, "", StoredDataProtection.IDENTIFIER_KEY, KEY))) {
            ConfigurationException e = assertThrows(ConfigurationException.class, () -> settings(values));
            assertEquals(keys, e.property(), e.getMessage());
            assertTrue(e.getMessage().contains(keys) && e.getMessage().contains(required), e.getMessage());
        }
        assertTrue(settings(Map.of("idempotency.store", "memory", required, "true", keys, "a:" + KEY,
                StoredDataProtection.IDENTIFIER_KEY, KEY)).protection().codec().encrypts());
        assertFalse(settings(Map.of("idempotency.store", "memory", required, "false")).protection().codec().encrypts());
        refused(required, Map.of("idempotency.store", "memory", required, "yes please"));
    }

    @Test
    void goodKeysEncryptAndHashAndTheSettingsNeverShowThem() {
        IdempotencySettings settings = settings(Map.of("idempotency.store", "memory",
                StoredDataProtection.KEYS, "new:" + KEY + ",old:" + KEY, StoredDataProtection.IDENTIFIER_KEY, KEY));
        assertTrue(settings.protection().codec().encrypts());
        assertTrue(settings.protection().identifiers().hashes());
        assertFalse(settings.toString().contains(KEY), settings.toString());
        assertTrue(settings.toString().contains("[new, old]"), settings.toString());
        assertFalse(settings(Map.of("idempotency.store", "memory")).protection().codec().encrypts());
    }

    /**
     * Hashed keys alone (no encryption) with read-unencrypted: the records from before, under plain
     * keys, are still looked for (reviewed: the setting was ignored without a cipher, and every retry
     * of an earlier request ran again although the start-up warning told the operator to set it).
     */
    @Test
    void readUnencryptedLooksForRecordsFromBeforeWithHashedKeysAloneToo() {
        String id = StoredDataProtection.IDENTIFIER_KEY;
        String read = StoredDataProtection.READ_UNENCRYPTED;
        assertTrue(settings(Map.of("idempotency.store", "memory", id, KEY, read, "true")).protection().readsRecordsFromBefore());
        assertFalse(settings(Map.of("idempotency.store", "memory", id, KEY)).protection().readsRecordsFromBefore());
        assertFalse(settings(Map.of("idempotency.store", "memory", read, "true")).protection().readsRecordsFromBefore(),
                "nothing was turned on: nothing from before to look for");
    }
}
