package io.idemkey.core;

import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.Base64;
import java.util.Optional;

/**
 * The engine's owner tokens: 96 random bits, then the time the owner first acquired the key (48
 * bits of milliseconds since 1970, by the engine's clock), base64url, 24 characters. The random
 * part comes first, so what a store keeps of a completed record's token (the Redis store: its first
 * 8 characters) is random. The time tells operators how long a record has been in progress
 * ({@link RecordAdmin}), across renewals, without a field of its own in any store; tokens made
 * before it was there (16 characters) have no time.
 */
public final class OwnerTokens {

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final Base64.Encoder ENCODER = Base64.getUrlEncoder().withoutPadding();
    private static final Base64.Decoder DECODER = Base64.getUrlDecoder();
    private static final int RANDOM_BYTES = 12;
    /** The length of a token with its time. */
    static final int LENGTH = 24;

    private OwnerTokens() {
    }

    /** A new token for an owner that acquires at {@code now}. */
    public static String newToken(Instant now) {
        ByteBuffer bytes = ByteBuffer.allocate(RANDOM_BYTES + 8);
        byte[] random = new byte[RANDOM_BYTES];
        RANDOM.nextBytes(random);
        bytes.put(random).putLong(now.toEpochMilli());
        byte[] token = new byte[RANDOM_BYTES + 6];
        System.arraycopy(bytes.array(), 0, token, 0, RANDOM_BYTES);
        System.arraycopy(bytes.array(), RANDOM_BYTES + 2, token, RANDOM_BYTES, 6); // the low 48 bits: until year 10889
        return ENCODER.encodeToString(token);
    }

    /** When the owner of {@code token} acquired its key, if the token says (one of this class's). */
    public static Optional<Instant> acquiredAt(String token) {
        if (token.length() != LENGTH) {
            return Optional.empty();
        }
        byte[] time;
        try {
            time = DECODER.decode(token.substring(LENGTH - 8));
        } catch (IllegalArgumentException notBase64url) {
            return Optional.empty();
        }
        long millis = 0;
        for (byte b : time) {
            millis = (millis << 8) | (b & 0xff);
        }
        return Optional.of(Instant.ofEpochMilli(millis));
    }
}
