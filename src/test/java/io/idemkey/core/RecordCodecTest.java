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

/** The sealed record form: AES-256-GCM, a fresh nonce each time, header, fingerprint and store key authenticated. */
class RecordCodecTest {

    private static final String KEY = "idempotency:h=abc";
    private static final byte[] FP = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
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
        byte[] sealed = codec.encode(KEY, FP, RESPONSE);
        assertEquals(RESPONSE, codec.decode(KEY, FP, sealed));
        assertEquals(0xA4, sealed[0] & 0xff);
        assertEquals(201, ((sealed[1] & 0xff) << 8) | (sealed[2] & 0xff));
        assertEquals(-1, new String(sealed, StandardCharsets.ISO_8859_1).indexOf("4111"));
        assertEquals(-1, new String(sealed, StandardCharsets.ISO_8859_1).indexOf("/orders/1"));
    }

    @Test
    void everyRecordGetsAFreshNonce() {
        Set<String> nonces = new HashSet<>();
        for (int i = 0; i < 2000; i++) {
            byte[] sealed = codec.encode(KEY, FP, RESPONSE);
            int at = 4 + sealed[3];
            nonces.add(Base64.getEncoder().encodeToString(Arrays.copyOfRange(sealed, at, at + RecordCipher.NONCE_BYTES)));
        }
        assertEquals(2000, nonces.size());
        assertNotEquals(Arrays.toString(codec.encode(KEY, FP, RESPONSE)), Arrays.toString(codec.encode(KEY, FP, RESPONSE)));
    }

    @Test
    void anyChangedByteIsRefused() {
        byte[] sealed = codec.encode(KEY, FP, RESPONSE);
        for (int i = 0; i < sealed.length; i++) {
            for (int bit = 0; bit < 8; bit++) {
                byte[] tampered = sealed.clone();
                tampered[i] ^= (byte) (1 << bit);
                int at = i;
                IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                        () -> codec.decode(KEY, FP, tampered), () -> "byte " + at + " changed, yet read");
                assertTrue(refused.getMessage() != null);
            }
        }
        assertThrows(IllegalArgumentException.class, () -> codec.decode(KEY, FP, Arrays.copyOf(sealed, sealed.length - 1)));
    }

    @Test
    void aRecordReadUnderAnotherKeyIsRefused() {
        byte[] sealed = codec.encode(KEY, FP, RESPONSE);
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                () -> codec.decode(KEY + "x", FP, sealed));
        assertTrue(refused.getMessage().contains("moved"), refused.getMessage());
    }

    /**
     * The fingerprint the store keeps beside the record is authenticated: a store writer who puts
     * another request's fingerprint beside a sealed response does not get it replayed to that request.
     */
    @Test
    void aRecordReadWithAnotherFingerprintIsRefused() {
        byte[] sealed = codec.encode(KEY, FP, RESPONSE);
        byte[] other = FP.clone();
        other[15] ^= 1;
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, () -> codec.decode(KEY, other, sealed));
        assertTrue(refused.getMessage().contains("does not authenticate"), refused.getMessage());
        assertThrows(IllegalArgumentException.class, () -> codec.decode(KEY, new byte[0], sealed));
        assertEquals(RESPONSE, codec.decode(KEY, FP, sealed));
    }

    /**
     * A record sealed with only its header and store key as associated data (first byte 0xA3) is
     * never read, not even in the migration window: it would let a store writer pair it with any
     * fingerprint. Its status stays readable for operators.
     */
    @Test
    void aRecordSealedWithoutItsFingerprintInTheAssociatedDataIsNeverRead() {
        byte[] sealed = codec.encode(KEY, FP, RESPONSE);
        sealed[0] = (byte) 0xA3;
        for (RecordCodec reader : List.of(codec, new RecordCodec(RecordCipher.parse(keys("a")), true), RecordCodec.PLAIN)) {
            assertInstanceOf(UnreadableRecordException.class, assertThrows(IllegalArgumentException.class,
                    () -> reader.decode(KEY, FP, sealed)));
        }
        assertEquals(201, RecordCodec.storedStatus(sealed).orElseThrow());
    }

    @Test
    void unknownKeyIdsAndPlainRecordsAreUnreadableNotCorrupt() {
        byte[] sealed = codec.encode(KEY, FP, RESPONSE);
        RecordCodec other = new RecordCodec(RecordCipher.parse(keys("b")), false);
        assertInstanceOf(UnreadableRecordException.class, assertThrows(IllegalArgumentException.class,
                () -> other.decode(KEY, FP, sealed)));
        assertInstanceOf(UnreadableRecordException.class, assertThrows(IllegalArgumentException.class,
                () -> RecordCodec.PLAIN.decode(KEY, FP, sealed)));
        byte[] plain = StoredResponseCodec.encode(RESPONSE);
        assertInstanceOf(UnreadableRecordException.class, assertThrows(IllegalArgumentException.class,
                () -> codec.decode(KEY, FP, plain)));
        assertEquals(RESPONSE, new RecordCodec(RecordCipher.parse(keys("a")), true).decode(KEY, FP, plain));
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
