package io.idemkey.store.redis;

import redis.clients.jedis.exceptions.JedisDataException;

import java.util.logging.Logger;

/**
 * Which plain commands this server takes in place of the record script, learnt from its first
 * refusal (no version is asked for: a proxy or a fork answers for what it does, not for a
 * version): {@code SET ... NX ... GET}, which an acquire without a rate limit sends (Redis from
 * 7.0, Valkey), and {@code SET ... IFEQ}, which a completion told the fingerprint sends (Valkey
 * from 8.1, Redis from 8.4). Once refused, the script does that work from then on.
 */
final class ServerCapabilities {

    /** The store's logger: the one an operator configures for the Redis store. */
    private static final Logger LOG = Logger.getLogger(RedisIdempotencyStore.class.getName());

    private final String description;
    private volatile boolean setGetRefused;
    private volatile boolean setIfeqRefused;

    /** @param description where the store points, for messages (never with credentials) */
    ServerCapabilities(String description) {
        this.description = description;
    }

    /** Whether acquires may send {@code SET ... NX ... GET} (no refusal seen). */
    boolean setGet() {
        return !setGetRefused;
    }

    /** Whether completions may send {@code SET ... IFEQ} (no refusal seen). */
    boolean setIfeq() {
        return !setIfeqRefused;
    }

    /**
     * Whether {@code e}, the reply to {@code SET ... NX ... GET}, refuses its {@code GET} beside
     * {@code NX} (a syntax error: a Redis before 7.0); if so, acquires run the script from now on.
     */
    boolean refusesSetGet(JedisDataException e) {
        if (RedisReply.of(e) != RedisReply.SYNTAX_ERROR) {
            return false;
        }
        setGetRefused = true;
        LOG.info(() -> "Idemkey: Redis at " + description + " refuses SET ... NX ... GET (a Redis before 7.0):"
                + " acquires run the record script from now on");
        return true;
    }

    /**
     * Takes note of {@code e}, an error reply to {@code SET ... IFEQ}: a server without
     * {@code IFEQ} refuses it as a syntax error (a proxy may say it knows no such option), and
     * completions run the script from now on; any other error (a key holding no string) concerns
     * that call alone.
     */
    void ifeqAnswered(JedisDataException e) {
        RedisReply kind = RedisReply.of(e);
        if (kind == RedisReply.SYNTAX_ERROR || kind == RedisReply.UNSUPPORTED) {
            setIfeqRefused = true;
            LOG.info(() -> "Idemkey: Redis at " + description + " refuses SET ... IFEQ (" + e.getMessage() + "; a Redis before"
                    + " 8.4, a Valkey before 8.1): completions run the record script from now on");
        }
    }
}
