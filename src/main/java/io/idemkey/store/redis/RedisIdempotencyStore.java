package io.idemkey.store.redis;

import io.idemkey.spi.AcquireResult;
import io.idemkey.spi.IdempotencyStore;
import io.idemkey.spi.Lease;
import io.idemkey.spi.RateLimit;
import io.idemkey.spi.StoreUnavailableException;
import redis.clients.jedis.CommandObject;
import redis.clients.jedis.CommandObjects;
import redis.clients.jedis.Connection;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.Response;
import redis.clients.jedis.exceptions.JedisBusyException;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.exceptions.JedisNoScriptException;
import redis.clients.jedis.util.Pool;

import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;

/**
 * The {@link IdempotencyStore} on Redis, through a Jedis connection pool. Every operation is one
 * round trip running one Lua script ({@code record.lua} next to this class), so acquire cannot race,
 * and complete, release and renew are compare-and-set on the owner token. A record is one compact
 * string that Redis expires itself ({@code PX}); with a rate limit, a key's request counter lives
 * beside it for its window. Nothing else of Idemkey's lives in Redis.
 *
 * <p>A command that fails on a pooled connection (Redis restarted, a proxy dropped it) is retried
 * once on a fresh connection before the store is declared unavailable, so the first request after
 * Redis returns succeeds. Pooled connections are not pinged on borrow.
 */
public final class RedisIdempotencyStore implements IdempotencyStore {

    private static final RedisScript RECORD = RedisScript.load("record");
    private static final byte[] ACQUIRE = bytes("acquire");
    private static final byte[] COMPLETE = bytes("complete");
    private static final byte[] RELEASE = bytes("release");
    private static final byte[] RENEW = bytes("renew");
    private static final byte[] ACQUIRED = {'A'};
    private static final byte[] MISMATCH = {'M'};
    private static final byte[] IN_PROGRESS = {'P'};
    private static final byte[] RATE_LIMITED = {'R'};
    private static final List<String> TRANSIENT_REPLIES =
            List.of("READONLY", "LOADING", "OOM", "BUSY", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN", "NOAUTH");

    private final Pool<Connection> pool;
    private final CommandObjects commands = new CommandObjects();
    private final String description;

    /**
     * @param pool        the connection pool; the store closes it
     * @param description where the store points, for messages (never with credentials)
     */
    public RedisIdempotencyStore(Pool<Connection> pool, String description) {
        this.pool = pool;
        this.description = description;
    }

    /** Opens a pool as the options say; no connection is made until the first command. */
    public static RedisIdempotencyStore open(RedisStoreOptions options) {
        return new RedisIdempotencyStore(options.createPool(), options.description());
    }

    @Override
    public AcquireResult acquire(String recordKey, byte[] fingerprint, String ownerToken, Duration lockTtl) {
        checkSizes(fingerprint, ownerToken);
        return acquired((List<?>) run(recordKey, ACQUIRE, fingerprint, bytes(ownerToken), millis(lockTtl)));
    }

    /**
     * The request counter of a record key, in the record's Redis Cluster slot: the record key as a
     * hash tag ({@code {<record key>}#requests} hashes as the record key does), or, where the prefix
     * carries a hash tag already, the record key with a suffix. {@code #} never occurs in a record
     * key (scope and key are percent-encoded), so a counter never names a record.
     */
    static String counterKey(String recordKey) {
        return recordKey.indexOf('{') >= 0 ? recordKey + "#requests" : "{" + recordKey + "}#requests";
    }

    @Override
    public AcquireResult acquire(String recordKey, byte[] fingerprint, String ownerToken, Duration lockTtl,
                                 RateLimit limit) {
        checkSizes(fingerprint, ownerToken);
        return acquired((List<?>) run(List.of(bytes(recordKey), bytes(counterKey(recordKey))), ACQUIRE, fingerprint,
                bytes(ownerToken), millis(lockTtl), bytes(Integer.toString(limit.permits())), millis(limit.window())));
    }

    @Override
    public boolean countsRequests() {
        return true;
    }

    private static void checkSizes(byte[] fingerprint, String ownerToken) {
        if (fingerprint.length > 255 || bytes(ownerToken).length > 255) {
            throw new IllegalArgumentException("fingerprints and owner tokens are at most 255 bytes here");
        }
    }

    private static AcquireResult acquired(List<?> reply) {
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

    @Override
    public boolean complete(String recordKey, String ownerToken, byte[] response, Duration ttl) {
        return applied(run(recordKey, COMPLETE, bytes(ownerToken), response, millis(ttl)));
    }

    @Override
    public boolean release(String recordKey, String ownerToken) {
        return applied(run(recordKey, RELEASE, bytes(ownerToken)));
    }

    @Override
    public boolean renew(String recordKey, String ownerToken, Duration lockTtl) {
        return applied(run(recordKey, RENEW, bytes(ownerToken), millis(lockTtl)));
    }

    /**
     * The leases' renewals pipelined on one connection: one round trip for all of them (each is
     * still its own script call, on its own record).
     */
    @Override
    public boolean[] renew(List<Lease> leases) {
        List<Object> replies;
        try {
            replies = execute(connection -> renewals(connection, leases, RECORD.sha1()));
        } catch (JedisNoScriptException e) {
            replies = execute(connection -> renewals(connection, leases, null));
        }
        boolean[] renewed = new boolean[leases.size()];
        for (int i = 0; i < renewed.length; i++) {
            renewed[i] = applied(replies.get(i));
        }
        return renewed;
    }

    /** The renewals as one pipeline: by the script's SHA-1, or with its text where {@code sha1} is null. */
    private List<Object> renewals(Connection connection, List<Lease> leases, byte[] sha1) {
        Pipeline pipeline = new Pipeline(connection, false);
        List<Response<Object>> responses = new ArrayList<>(leases.size());
        for (Lease lease : leases) {
            List<byte[]> keys = List.of(bytes(lease.recordKey()));
            List<byte[]> argv = List.of(RENEW, bytes(lease.ownerToken()), millis(lease.lockTtl()));
            responses.add(pipeline.appendCommand(sha1 != null ? commands.evalsha(sha1, keys, argv)
                    : commands.eval(RECORD.source(), keys, argv)));
        }
        pipeline.sync(); // every reply is read: the connection goes back to the pool clean
        List<Object> replies = new ArrayList<>(responses.size());
        for (Response<Object> response : responses) {
            replies.add(response.get()); // an error reply throws here, to be classified by attempt
        }
        return replies;
    }

    @Override
    public boolean isAvailable() {
        try {
            return "PONG".equals(execute(commands.ping()));
        } catch (RuntimeException e) {
            return false;
        }
    }

    @Override
    public void close() {
        pool.close();
    }

    @Override
    public String toString() {
        return "RedisIdempotencyStore[" + description + "]";
    }

    private Object run(String recordKey, byte[]... args) {
        return run(List.of(bytes(recordKey)), args);
    }

    private Object run(List<byte[]> keys, byte[]... args) {
        List<byte[]> argv = List.of(args);
        try {
            return execute(commands.evalsha(RECORD.sha1(), keys, argv));
        } catch (JedisNoScriptException e) {
            return execute(commands.eval(RECORD.source(), keys, argv));
        }
    }

    /** One command; retried once on a fresh connection if the pooled one turns out to be broken. */
    private <T> T execute(CommandObject<T> command) {
        return execute(connection -> connection.executeCommand(command));
    }

    /** Commands on one connection; retried once on a fresh connection if the pooled one turns out to be broken. */
    private <T> T execute(Function<Connection, T> commands) {
        try {
            return attempt(commands);
        } catch (JedisConnectionException first) {
            if (timedOut(first)) {
                throw unavailable(first); // Redis is slow, not gone: waiting twice would not help
            }
            pool.clear(); // idle connections are likely as stale as this one
            try {
                return attempt(commands);
            } catch (JedisConnectionException second) {
                throw unavailable(second);
            }
        }
    }

    /**
     * The commands on one pooled connection. Every reply is classified here, on the first try and
     * the retry alike: "not now" replies ({@code -LOADING} after a restart, ...) are outages.
     */
    private <T> T attempt(Function<Connection, T> commands) {
        try (Connection connection = borrow()) {
            return commands.apply(connection);
        } catch (JedisNoScriptException e) {
            throw e;
        } catch (JedisDataException e) {
            throw transientReply(e) ? unavailable(e) : e;
        }
    }

    private Connection borrow() {
        try {
            return pool.getResource();
        } catch (JedisDataException e) {
            throw e; // a new connection's handshake was answered: classified by attempt
        } catch (JedisException e) {
            throw unavailable(e); // cannot connect, or no free connection within the wait limit
        }
    }

    private StoreUnavailableException unavailable(JedisException e) {
        return new StoreUnavailableException("Redis at " + description + " is unavailable: " + e.getMessage(), e);
    }

    /** Replies that mean "not now" (a replica, a restart, memory full, a busy script), not a defect. */
    private static boolean transientReply(JedisDataException e) {
        if (e instanceof JedisBusyException) {
            return true;
        }
        String message = String.valueOf(e.getMessage());
        for (String prefix : TRANSIENT_REPLIES) {
            if (message.startsWith(prefix)) {
                return true;
            }
        }
        return false;
    }

    private static boolean timedOut(Throwable e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof SocketTimeoutException) {
                return true;
            }
        }
        return false;
    }

    private static boolean applied(Object reply) {
        return Long.valueOf(1).equals(reply);
    }

    private static byte[] bytes(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] millis(Duration duration) {
        return bytes(Long.toString(Math.max(1, duration.toMillis())));
    }
}
