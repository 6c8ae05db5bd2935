package io.idemkey.store.redis;

import io.idemkey.spi.RateLimit;
import io.idemkey.spi.StoreAccessDeniedException;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.params.SetParams;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

import static io.idemkey.store.redis.RecordLayout.bytes;
import static io.idemkey.store.redis.RecordLayout.counterKey;

/**
 * What a Redis ACL user of Idemkey's needs ({@link #rule}), and the check, as the application
 * starts, that it has it: each command the store's calls may send, once, so that a user without
 * one is found then, not by each request, and told the rule.
 */
final class RedisAcl {

    /**
     * What a Redis ACL user of Idemkey's may do, after its key pattern ({@link #rule}): every
     * command the store sends, and no other. {@code PING} (readiness); {@code SET}, {@code PTTL}
     * (an acquire without a script, a completion with {@code IFEQ}); {@code EVALSHA}, {@code EVAL}
     * (the record script, and its text where a node never saw it) and the commands the script calls,
     * {@code GET}, {@code SET}, {@code PEXPIRE}, {@code INCR}, {@code PTTL}, {@code DEL}; {@code WAIT}
     * ({@code wait-replicas}); {@code SCAN} and {@code SCRIPT LOAD} (the list of records in progress);
     * {@code SELECT} (a database other than 0); {@code ASKING} and {@code CLUSTER SLOTS} (a cluster).
     * A connection authenticates with {@code AUTH}, which needs no permission; a client name and
     * library information are not sent. Sentinels are asked with the sentinels' own users.
     */
    static final String COMMANDS = "resetchannels -@all +ping +select +get +set +pttl +pexpire +incr +del"
            + " +eval +evalsha +script|load +scan +wait +asking +cluster|slots";

    private final RedisIdempotencyStore store;
    private final RedisCommands commands;
    private final String description;

    /**
     * @param store       whose calls are checked
     * @param commands    the store's commands
     * @param description where the store points, for messages (never with credentials)
     */
    RedisAcl(RedisIdempotencyStore store, RedisCommands commands, String description) {
        this.store = store;
        this.commands = commands;
        this.description = description;
    }

    /**
     * The Redis ACL rule a user of Idemkey's needs whose records' keys start with {@code keyPrefix}:
     * the keys that start with it ({@code ~<prefix>*}: records, and the rate limit's counters, which
     * start with their record's key) and {@link #COMMANDS}.
     */
    static String rule(String keyPrefix) {
        return "~" + RecordLayout.globEscaped(keyPrefix) + "* " + COMMANDS;
    }

    /** The sentence that ends a refusal's message: the rule the user needs for {@code keyPrefix}, and where it is explained. */
    static String ruleNeeded(String keyPrefix) {
        return ". That user needs the ACL rule " + rule(keyPrefix) + " (docs/security.md)";
    }

    /**
     * Sends each command the store's calls may send, once, on a key of its own under
     * {@code keyPrefix} ({@value RecordLayout#PERMISSION_CHECK_KEY} and a random number after it,
     * which no record key can be: those hold a {@code :} after the prefix): {@code PING}; a
     * rate-limited acquire (the record script: {@code EVALSHA}, {@code GET}, {@code INCR},
     * {@code PEXPIRE}, {@code SET}) when {@code rateLimited}; an acquire ({@code SET ... GET},
     * {@code PTTL}, or the script); a renewal ({@code PEXPIRE}); the script by its text
     * ({@code EVAL}); a completion ({@code SET}, and {@code WAIT} with {@code wait-replicas}); with
     * {@code listed}, a page of the records in progress ({@code SCAN}, {@code SCRIPT LOAD}); and a
     * purge ({@code DEL}). The record lives 10 s at most and is deleted at the end; a counter, for
     * its 10 s window.
     */
    void check(String keyPrefix, boolean rateLimited, boolean listed) {
        String token = Long.toHexString(new SecureRandom().nextLong());
        String key = keyPrefix + RecordLayout.PERMISSION_CHECK_KEY + token;
        byte[] fingerprint = new byte[16];
        Duration ttl = Duration.ofSeconds(10);
        checked(keyPrefix, key, "PING", () -> commands.execute(UnifiedJedis::ping));
        if (rateLimited) {
            checked(keyPrefix, key, "a rate-limited acquire of " + key + " (its counter: " + counterKey(key) + ")",
                    () -> store.acquire(key, fingerprint, token, ttl, new RateLimit(1_000_000, ttl)));
        }
        checked(keyPrefix, key, "an acquire of " + key, () -> store.acquire(key, fingerprint, token, ttl));
        checked(keyPrefix, key, "a renewal of " + key, () -> store.renew(key, token, ttl));
        checked(keyPrefix, key, "EVAL of the record script on " + key, () -> commands.execute(
                client -> client.eval(RecordLayout.SCRIPT.source(), List.of(bytes(key)), List.of(RecordLayout.INSPECT))));
        checked(keyPrefix, key, "a completion of " + key, () -> store.complete(key, token, fingerprint, new byte[1], ttl));
        if (listed) {
            checked(keyPrefix, key, "a page of the records in progress under " + keyPrefix, () -> store.inProgress(key, "", 1));
        }
        checked(keyPrefix, key, "a purge of " + key, () -> store.purge(key, true));
    }

    /**
     * One step of {@link #check}; a refusal names the step, the command Redis refused (where a
     * script's command was refused, Redis 7.0 does not say which: each the record script calls is
     * then sent alone, and the first refused named), and the rule for this prefix.
     */
    private void checked(String keyPrefix, String key, String step, Runnable call) {
        try {
            call.run();
        } catch (StoreAccessDeniedException e) {
            String reply = replyOf(e);
            if (RedisReply.of(reply) == RedisReply.CREDENTIALS_REFUSED) {
                throw e;
            }
            boolean inScript = e.getCause() instanceof JedisDataException script
                    && RedisReply.of(script) == RedisReply.REFUSED_IN_SCRIPT;
            String alone = inScript
                    ? scriptCommandRefused(key).map(refused -> "; of the commands the record script calls, Redis refuses "
                            + refused).orElse("") : "";
            throw new StoreAccessDeniedException("Redis at " + description + " refuses " + step
                    + " to the user Idemkey connects as: " + withoutFullStop(reply) + alone + ruleNeeded(keyPrefix),
                    e.getCause());
        }
    }

    /**
     * The first command of the record script's that Redis refuses when sent alone on {@code key}
     * (and its reply), or empty: {@code GET}, {@code PTTL}, {@code SET ... PX}, {@code PEXPIRE},
     * {@code DEL}, then {@code INCR} on the key's counter, which is given an expiry at once
     * ({@code PEXPIRE} was allowed by then).
     */
    private Optional<String> scriptCommandRefused(String key) {
        byte[] record = bytes(key);
        byte[] counter = bytes(counterKey(key));
        long ttl = 10_000;
        Map<String, Function<UnifiedJedis, Object>> alone = new LinkedHashMap<>();
        alone.put("GET", client -> client.get(record));
        alone.put("PTTL", client -> client.pttl(record));
        alone.put("SET", client -> client.set(record, new byte[1], SetParams.setParams().px(ttl)));
        alone.put("PEXPIRE", client -> client.pexpire(record, ttl));
        alone.put("DEL", client -> client.del(record));
        alone.put("INCR", client -> client.incr(counter) + client.pexpire(counter, ttl));
        for (Map.Entry<String, Function<UnifiedJedis, Object>> command : alone.entrySet()) {
            try {
                commands.execute(command.getValue());
            } catch (StoreAccessDeniedException refused) {
                return Optional.of(command.getKey() + " (" + withoutFullStop(replyOf(refused)) + ")");
            }
        }
        return Optional.empty();
    }

    /** Redis's reply a refusal was made of. */
    private static String replyOf(StoreAccessDeniedException e) {
        return e.getCause() == null ? String.valueOf(e.getMessage()) : String.valueOf(e.getCause().getMessage());
    }

    /** A reply without the full stops it ends with, to go on in a sentence. */
    static String withoutFullStop(String reply) {
        String trimmed = reply.strip();
        while (trimmed.endsWith(".")) {
            trimmed = trimmed.substring(0, trimmed.length() - 1);
        }
        return trimmed;
    }
}
