package io.idemkey.store.redis;

import io.idemkey.spi.AcquireResult;
import io.idemkey.spi.Renewal;
import io.idemkey.spi.StoreInspection.Purge;
import io.idemkey.spi.StoreInspection.StoredRecord;
import redis.clients.jedis.exceptions.JedisDataException;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * What the store keeps in Redis and how it is laid out, as the record script ({@code record.lua}
 * next to this class) reads and writes it: the keys (a record's, its request counter's, the key
 * {@link RedisAcl} checks permissions on), a record's value, the script's operations and what
 * each answers. A record is one compact string: its state ({@code P} in progress, {@code C}
 * completed), the fingerprint and the owner token (a completed record keeps its first
 * {@value #KEPT_TOKEN_BYTES} bytes), each after its length in one byte, then, completed, the
 * response.
 */
final class RecordLayout {

    /** The record script; its first argument names the operation. */
    static final RedisScript SCRIPT = RedisScript.load("record");
    static final byte[] ACQUIRE = bytes("acquire");
    static final byte[] COMPLETE = bytes("complete");
    static final byte[] RELEASE = bytes("release");
    static final byte[] RENEW = bytes("renew");
    static final byte[] INSPECT = bytes("inspect");
    static final byte[] LISTED = bytes("listed");
    static final byte[] PURGE = bytes("purge");
    /** What a completed record keeps of its owner's token. */
    private static final int KEPT_TOKEN_BYTES = 8;
    /** The largest fingerprint or owner token a record holds: its length is one byte. */
    private static final int MAX_FIELD_BYTES = 255;
    private static final byte[] ACQUIRED = {'A'};
    private static final byte[] MISMATCH = {'M'};
    private static final byte[] IN_PROGRESS = {'P'};
    private static final byte[] RATE_LIMITED = {'R'};
    /** How a request counter's key ends; {@code #} never occurs in a record key (percent-encoded). */
    private static final String COUNTER_SUFFIX = "#requests";
    /**
     * How the key {@link RedisAcl} writes for a moment starts, after the key prefix (a random
     * number follows): never a record's key, which holds a {@code :} after the prefix, or starts
     * {@code h=} where identifiers are hashed.
     */
    static final String PERMISSION_CHECK_KEY = "permission-check-";

    private RecordLayout() {
    }

    /**
     * The request counter of a record key: the record key, then a suffix, so it starts with
     * whatever the record key starts with (the key prefix a Redis ACL user is limited to), and it
     * lands in the record's Redis Cluster slot: {@code <record key>{<record key>}#requests}, whose
     * hash tag is the record key (a record key holds no brace: scope and key are percent-encoded),
     * or, where the prefix carries a hash tag already, {@code <record key>#requests}, which hashes
     * by that tag. {@code #} never occurs in a record key, so a counter never names a record.
     */
    static String counterKey(String recordKey) {
        return recordKey.indexOf('{') >= 0 ? recordKey + COUNTER_SUFFIX : recordKey + "{" + recordKey + "}" + COUNTER_SUFFIX;
    }

    /** Whether {@code key} is a request counter's, not a record's. */
    static boolean isCounter(byte[] key) {
        return new String(key, StandardCharsets.UTF_8).endsWith(COUNTER_SUFFIX);
    }

    /** {@code prefix} as a glob pattern (SCAN's {@code MATCH}, an ACL key pattern) that matches it literally. */
    static String globEscaped(String prefix) {
        StringBuilder out = new StringBuilder(prefix.length() + 4);
        for (char c : prefix.toCharArray()) {
            if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') {
                out.append('\\');
            }
            out.append(c);
        }
        return out.toString();
    }

    /** Whether a record holds this fingerprint and owner token, each of whose lengths is one byte. */
    static boolean fits(byte[] fingerprint, byte[] token) {
        return fingerprint.length <= MAX_FIELD_BYTES && token.length <= MAX_FIELD_BYTES;
    }

    /** @throws IllegalArgumentException where a record cannot hold the fingerprint or the owner token */
    static void checkSizes(byte[] fingerprint, String ownerToken) {
        if (!fits(fingerprint, bytes(ownerToken))) {
            throw new IllegalArgumentException("fingerprints and owner tokens are at most 255 bytes here");
        }
    }

    /** An in-progress record: {@code P}, the fingerprint and the owner token. */
    static byte[] inProgressRecord(byte[] fingerprint, byte[] token) {
        return record('P', fingerprint, token, token.length, new byte[0]);
    }

    /** A completed record: {@code C}, the fingerprint, the first bytes of the owner token and the response. */
    static byte[] completedRecord(byte[] fingerprint, byte[] token, byte[] response) {
        return record('C', fingerprint, token, Math.min(KEPT_TOKEN_BYTES, token.length), response);
    }

    /** A record: its state, the fingerprint and {@code kept} bytes of the token, each after its length, then the response. */
    private static byte[] record(char state, byte[] fingerprint, byte[] token, int kept, byte[] response) {
        byte[] record = new byte[3 + fingerprint.length + kept + response.length];
        record[0] = (byte) state;
        record[1] = (byte) fingerprint.length;
        System.arraycopy(fingerprint, 0, record, 2, fingerprint.length);
        record[2 + fingerprint.length] = (byte) kept;
        System.arraycopy(token, 0, record, 3 + fingerprint.length, kept);
        System.arraycopy(response, 0, record, 3 + fingerprint.length + kept, response.length);
        return record;
    }

    /**
     * What an acquire that found {@code record} answers, as the script's acquire: another request's
     * fingerprint, the record in progress, or the completed response; null where it is this token's
     * own record in progress.
     *
     * @param left the time the record has left, in milliseconds
     */
    static AcquireResult found(String recordKey, byte[] record, byte[] fingerprint, byte[] token, long left) {
        int tokenAt = record.length < 2 ? record.length : 2 + (record[1] & 0xff);
        int responseAt = tokenAt < record.length ? tokenAt + 1 + (record[tokenAt] & 0xff) : Integer.MAX_VALUE;
        if (responseAt > record.length || (record[0] != 'P' && record[0] != 'C')) {
            throw new JedisDataException("the key " + recordKey + " holds no record of Idemkey's");
        }
        boolean inProgress = record[0] == 'P';
        if (inProgress && Arrays.equals(record, tokenAt + 1, responseAt, token, 0, token.length)) {
            return null;
        }
        if (!Arrays.equals(record, 2, tokenAt, fingerprint, 0, fingerprint.length)) {
            return AcquireResult.MISMATCH;
        }
        Duration remaining = Duration.ofMillis(Math.max(0, left));
        return inProgress ? new AcquireResult.InProgress(remaining)
                : new AcquireResult.Completed(Arrays.copyOfRange(record, responseAt, record.length), remaining);
    }

    /** The script's {@code acquire} reply: its outcome's letter, then the time left, or the response and the time left. */
    static AcquireResult acquired(List<?> reply) {
        byte[] outcome = (byte[]) reply.get(0);
        if (Arrays.equals(outcome, RATE_LIMITED)) {
            return new AcquireResult.RateLimited(Duration.ofMillis(Math.max(0, (Long) reply.get(1))));
        }
        if (Arrays.equals(outcome, ACQUIRED)) {
            return AcquireResult.ACQUIRED;
        }
        if (Arrays.equals(outcome, MISMATCH)) {
            return AcquireResult.MISMATCH;
        }
        if (Arrays.equals(outcome, IN_PROGRESS)) {
            return new AcquireResult.InProgress(Duration.ofMillis(Math.max(0, (Long) reply.get(1))));
        }
        return new AcquireResult.Completed((byte[]) reply.get(1), Duration.ofMillis(Math.max(0, (Long) reply.get(2))));
    }

    /** Whether the script's {@code complete}, {@code release} or {@code renew} applied (it answers 1). */
    static boolean applied(Object reply) {
        return Long.valueOf(1).equals(reply);
    }

    /** A renewal's reply: Redis runs every script alone, so a record is never held (no {@link Renewal#UNKNOWN}). */
    static Renewal renewal(Object reply) {
        return applied(reply) ? Renewal.RENEWED : Renewal.LOST;
    }

    /** The script's {@code purge} reply: positive, purged; zero, no record; negative, one in progress kept. */
    static Purge purged(Object reply) {
        long outcome = (Long) reply;
        return outcome > 0 ? Purge.PURGED : outcome == 0 ? Purge.ABSENT : Purge.IN_PROGRESS;
    }

    /** The script's {@code inspect} or {@code listed} reply as a record: the record and the time it has left, or empty. */
    static Optional<StoredRecord> stored(String recordKey, List<?> reply) {
        if (reply.isEmpty()) {
            return Optional.empty();
        }
        byte[] record = (byte[]) reply.get(0);
        if (record.length < 3 || (record[0] != 'P' && record[0] != 'C')) {
            return Optional.empty(); // not one of Idemkey's records (a request counter, another application's key)
        }
        int fingerprintLength = record[1] & 0xff;
        int tokenAt = 2 + fingerprintLength;
        if (record.length < tokenAt + 1 || record.length < tokenAt + 1 + (record[tokenAt] & 0xff)) {
            return Optional.empty();
        }
        int tokenLength = record[tokenAt] & 0xff;
        int responseAt = tokenAt + 1 + tokenLength;
        boolean completed = record[0] == 'C';
        return Optional.of(new StoredRecord(recordKey, completed, Arrays.copyOfRange(record, 2, tokenAt),
                new String(record, tokenAt + 1, tokenLength, StandardCharsets.UTF_8),
                Duration.ofMillis(Math.max(0, (Long) reply.get(1))),
                completed ? Arrays.copyOfRange(record, responseAt, record.length) : new byte[0]));
    }

    static byte[] bytes(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }

    /** A time to live in milliseconds, at least 1 (SET refuses a {@code PX} of 0). */
    static byte[] millis(Duration duration) {
        return bytes(Long.toString(Math.max(1, duration.toMillis())));
    }
}
