package io.idemkey.core;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The sealed record form: AES-256-GCM, a fresh nonce each time, header and store key authenticated. */
class RecordCodecTest {

    private static final String KEY = "idempotency:h:abc";
    private static final StoredResponse RESPONSE = new StoredResponse(201,
            List.of(new StoredResponse.Header("Location", "/orders/1")),
            "{\"card\":\"4111111111111111\"}".getBytes(StandardCharsets.UTF_8));

    static String keys(String... ids) {
        StringBuilder spec = new StringBuilder();
        for (String id : ids) {
            byte[] key = new byte[32];
            new SecureRandom().nextBytes(key);
            spec.append(spec.length() == 0 ? "" : ",").append(id).append(':').append(Base64.getEncoder().encodeToString(key));
        }
        return spec.toString();
    }

    private final RecordCodec codec = new RecordCodec(RecordCipher.parse(keys("a")), false);

    @Test
    void roundTripsAndKeepsOnlyTheStatusReadable() {
        byte[] sealed = codec.encode(KEY, RESPONSE);
        assertEquals(RESPONSE, codec.decode(KEY, sealed));
        assertEquals(0xA3, sealed[0] & 0xff);
        assertEquals(201, ((sealed[1] & 0xff) << 8) | (sealed[2] & 0xff));
        assertEquals(-1, new String(sealed, StandardCharsets.ISO_8859_1).indexOf("4111"));
        assertEquals(-1, new String(sealed, StandardCharsets.ISO_8859_1).indexOf("/orders/1"));
    }

    @Test
    void everyRecordGetsAFreshNonce() {
        Set<String> nonces = new HashSet<>();
        for (int i = 0; i < 2000; i++) {
            byte[] sealed = codec.encode(KEY, RESPONSE);
            int at = 4 + sealed[3];
            nonces.add(Base64.getEncoder().encodeToString(Arrays.copyOfRange(sealed, at, at + RecordCipher.NONCE_BYTES)));
        }
        assertEquals(2000, nonces.size());
        assertNotEquals(Arrays.toString(codec.encode(KEY, RESPONSE)), Arrays.toString(codec.encode(KEY, RESPONSE)));
    }

    @Test
    void anyChangedByteIsRefused() {
        byte[] sealed = codec.encode(KEY, RESPONSE);
        for (int i = 0; i < sealed.length; i++) {
            for (int bit = 0; bit < 8; bit++) {
                byte[] tampered = sealed.clone();
                tampered[i] ^= (byte) (1 << bit);
                int at = i;
                IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                        () -> codec.decode(KEY, tampered), () -> "byte " + at + " changed, yet read");
                assertTrue(refused.getMessage() != null);
            }
        }
        assertThrows(IllegalArgumentException.class, () -> codec.decode(KEY, Arrays.copyOf(sealed, sealed.length - 1)));
    }

    @Test
    void aRecordReadUnderAnotherKeyIsRefused() {
        byte[] sealed = codec.encode(KEY, RESPONSE);
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                () -> codec.decode(KEY + "x", sealed));
        assertTrue(refused.getMessage().contains("moved"), refused.getMessage());
    }

    @Test
    void unknownKeyIdsAndPlainRecordsAreUnreadableNotCorrupt() {
        byte[] sealed = codec.encode(KEY, RESPONSE);
        RecordCodec other = new RecordCodec(RecordCipher.parse(keys("b")), false);
        assertInstanceOf(UnreadableRecordException.class, assertThrows(IllegalArgumentException.class,
                () -> other.decode(KEY, sealed)));
        assertInstanceOf(UnreadableRecordException.class, assertThrows(IllegalArgumentException.class,
                () -> RecordCodec.PLAIN.decode(KEY, sealed)));
        byte[] plain = StoredResponseCodec.encode(RESPONSE);
        assertInstanceOf(UnreadableRecordException.class, assertThrows(IllegalArgumentException.class,
                () -> codec.decode(KEY, plain)));
        assertEquals(RESPONSE, new RecordCodec(RecordCipher.parse(keys("a")), true).decode(KEY, plain));
    }

    @Test
    void badKeySettingsSayWhatIsWrongWithoutQuotingAKey() {
        String key = Base64.getEncoder().encodeToString(new byte[32]);
        for (String bad : List.of("a:" + Base64.getEncoder().encodeToString(new byte[16]), "a:not*base64",
                "a:" + key + ",a:" + key, "no-colon", ":" + key, "a b:" + key, "")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RecordCipher.parse(bad), bad);
            assertTrue(!e.getMessage().contains(key), e.getMessage());
        }
        assertEquals(List.of("new", "old"), List.copyOf(RecordCipher.parse("new:" + key + ", old:" + key).keyIds()));
        assertEquals("new", RecordCipher.parse("new:" + key + ", old:" + key).currentKeyId());
    }
}
