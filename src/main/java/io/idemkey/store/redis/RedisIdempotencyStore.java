package io.idemkey.store.redis;

import io.idemkey.spi.AcquireResult;
import io.idemkey.spi.IdempotencyStore;
import io.idemkey.spi.Lease;
import io.idemkey.spi.RateLimit;
import io.idemkey.spi.Renewal;
import io.idemkey.spi.StoreAccessDeniedException;
import io.idemkey.spi.StoreInspection;
import io.idemkey.spi.StoreUnavailableException;
import redis.clients.jedis.AbstractPipeline;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Connection;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.Response;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.params.SetParams;
import redis.clients.jedis.resps.ScanResult;
import redis.clients.jedis.exceptions.JedisAccessControlException;
import redis.clients.jedis.exceptions.JedisAskDataException;
import redis.clients.jedis.exceptions.JedisBusyException;
import redis.clients.jedis.exceptions.JedisClusterException;
import redis.clients.jedis.exceptions.JedisClusterOperationException;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.exceptions.JedisMovedDataException;
import redis.clients.jedis.exceptions.JedisNoScriptException;
import redis.clients.jedis.exceptions.JedisRedirectionException;

import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.logging.Logger;

/**
 * The {@link IdempotencyStore} on Redis, through a Jedis client: one server ({@link RedisClient}), a
 * master found through Sentinel, or a Redis Cluster ({@link RedisStoreOptions.Mode}). Every
 * operation is one round trip running one Lua script ({@code record.lua} next to this class), so
 * acquire cannot race, and complete, release and renew are compare-and-set on the owner token;
 * except an acquire without a rate limit, which is two plain commands in one round trip, whose
 * decision is as atomic and which cost Redis about half of the script's work
 * ({@link #acquire(String, byte[], String, Duration)}; a Redis before 7.0 gets the script), and a
 * completion told the fingerprint where Redis has {@code SET ... IFEQ} (Valkey from 8.1, Redis from
 * 8.4), which is that one command, and the script only where it wrote nothing
 * ({@link #complete(String, String, byte[], byte[], Duration)}). A
 * record is one compact string that Redis expires itself ({@code PX}); with a rate limit, a key's
 * request counter lives beside it, under a key that starts with the record's, in the same cluster
 * slot, for its window ({@link #counterKey}). Each script touches only the keys it is given, so in
 * a cluster it runs on the record's slot's master; a node that never saw the script answers
 * {@code NOSCRIPT} and gets its text once. Nothing else of Idemkey's lives in Redis, but for the
 * seconds {@link #checkPermissions} takes. A user limited by a Redis ACL needs {@link #aclRule}:
 * Redis's refusal ({@code NOPERM}, {@code WRONGPASS}, {@code NOAUTH}) is a
 * {@link StoreAccessDeniedException}, never an outage.
 *
 * <p>A command that fails on a pooled connection (Redis restarted, a proxy dropped it) is retried
 * once on a fresh connection before the store is declared unavailable, so the first request after
 * Redis returns succeeds; one that timed out (connecting, or waiting for the reply) is not: Redis
 * may have run it, and a Redis that does not answer would be waited for twice. Pooled connections
 * are not pinged on borrow. Sentinel and cluster clients find their topology when the store opens;
 * if no node answers then, the store keeps trying on each call (the servers start without Redis, as
 * with one server), until it is closed. A cluster client asks the nodes for the slots again soon
 * after a call got no answer, and periodically ({@link ClusterMasters}).
 *
 * <p>With {@link RedisStoreOptions#coalesce(boolean)}, acquire, complete, release and renew calls
 * that are ready at the same moment, from any requests, travel together: one pipeline per master,
 * one write and one read ({@link CoalescedCalls}); one caller alone never waits, and once calls
 * arrive together a batch waits {@link RedisStoreOptions#coalesceLinger(Duration)} for more. Each
 * keeps its own reply, classification and retry as above: a broken connection fails exactly the
 * calls it carried, each of which is then sent again once, on a fresh connection, in whatever
 * batch it meets. A completion that waits for replicas ({@code wait-replicas}) and the renewals of
 * many leases (one pipeline already) are sent as without it: a {@code WAIT} holds up every reply after
 * it on its connection, so it would hold up every call in its batch.
 */
public final class RedisIdempotencyStore implements IdempotencyStore, StoreInspection {

    private static final Logger LOG = Logger.getLogger(RedisIdempotencyStore.class.getName());

    static final RedisScript RECORD = RedisScript.load("record");
    private static final byte[] ACQUIRE = bytes("acquire");
    private static final byte[] COMPLETE = bytes("complete");
    private static final byte[] RELEASE = bytes("release");
    private static final byte[] RENEW = bytes("renew");
    private static final byte[] INSPECT = bytes("inspect");
    private static final byte[] LISTED = bytes("listed");
    private static final byte[] PURGE = bytes("purge");
    /** How many SCAN calls one page of {@link #inProgress} makes at most. */
    static final int SCANS_PER_PAGE = 10;
    /** How many redirections in a row a call of the store's own pipelines follows ({@link #onMaster}). */
    static final int REDIRECTIONS = 5;
    /** Jedis's message when its pool gave no connection (the cause says why: none free in time, the pool closed). */
    private static final String NO_CONNECTION_FROM_POOL = "Could not get a resource from the pool";
    private static final byte[] ACQUIRED = {'A'};
    private static final byte[] MISMATCH = {'M'};
    private static final byte[] IN_PROGRESS = {'P'};
    private static final byte[] RATE_LIMITED = {'R'};
    private static final byte[] NX = bytes("NX");
    private static final byte[] PX = bytes("PX");
    private static final byte[] GET = bytes("GET");
    private static final byte[] IFEQ = bytes("IFEQ");
    /** What a completed record keeps of its owner's token (record.lua). */
    private static final int KEPT_TOKEN_BYTES = 8;
    private static final List<String> TRANSIENT_REPLIES =
            List.of("READONLY", "LOADING", "OOM", "MASTERDOWN", "TRYAGAIN", "NOREPLICAS");
    /**
     * What a Redis ACL user of Idemkey's may do, after its key pattern ({@link #aclRule}): every
     * command the store sends, and no other. {@code PING} (readiness); {@code SET}, {@code PTTL}
     * (an acquire without a script, a completion with {@code IFEQ}); {@code EVALSHA}, {@code EVAL}
     * (the record script, and its text where a node never saw it) and the commands the script calls,
     * {@code GET}, {@code SET}, {@code PEXPIRE}, {@code INCR}, {@code PTTL}, {@code DEL}; {@code WAIT}
     * ({@code wait-replicas}); {@code SCAN} and {@code SCRIPT LOAD} (the list of records in progress);
     * {@code SELECT} (a database other than 0); {@code ASKING} and {@code CLUSTER SLOTS} (a cluster).
     * A connection authenticates with {@code AUTH}, which needs no permission; a client name and
     * library information are not sent. Sentinels are asked with the sentinels' own users.
     */
    public static final String ACL_COMMANDS = "resetchannels -@all +ping +select +get +set +pttl +pexpire +incr +del"
            + " +eval +evalsha +script|load +scan +wait +asking +cluster|slots";
    /**
     * How the key {@link #checkPermissions} writes for a moment starts, after the key prefix (a
     * random number follows): never a record's key, which holds a {@code :} after the prefix, or
     * starts {@code h=} where identifiers are hashed.
     */
    static final String PERMISSION_CHECK_KEY = "permission-check-";

    private final Supplier<RedisStoreOptions.Connected> connect;
    private final Runnable afterClose;
    private final String description;
    private final int waitReplicas;
    private final long waitTimeoutMillis;
    private final LongAdder notReplicated = new LongAdder();
    private final CoalescedCalls coalesced; // null: each call on a connection of its own
    private volatile boolean setGetRefused; // a Redis before 7.0: acquires run the record script
    private volatile boolean setIfeqRefused; // a Redis without SET ... IFEQ: completions run the record script
    private volatile Runnable whenNotReplicated = () -> { };
    private volatile RedisStoreOptions.Connected connected;
    private boolean closed; // guarded by this

    /**
     * @param connect      makes the client (called again until it succeeds, never once the store is
     *                     closed); the store closes it
     * @param afterClose   what the store stops once closed, besides the client (its own executor)
     * @param description  where the store points, for messages (never with credentials)
     * @param waitReplicas replicas that must acknowledge a completion ({@code WAIT}); 0: none
     * @param waitTimeout  how long a completion waits for them
     * @param coalesced    the calls sent together ({@link CoalescedCalls}), or null: each alone
     */
    RedisIdempotencyStore(Supplier<RedisStoreOptions.Connected> connect, Runnable afterClose, String description,
                          int waitReplicas, Duration waitTimeout, CoalescedCalls coalesced) {
        this.connect = connect;
        this.coalesced = coalesced;
        this.afterClose = afterClose;
        this.description = description;
        this.waitReplicas = waitReplicas;
        this.waitTimeoutMillis = Math.max(1, waitTimeout.toMillis());
    }

    /**
     * A store as the options say; a standalone one makes no connection until the first command. A
     * cluster store refreshes its topology on a thread of its own (stopped when it closes): a
     * server gives it Idemkey's background pool with {@link #open(RedisStoreOptions, ScheduledExecutorService)}.
     */
    public static RedisIdempotencyStore open(RedisStoreOptions options) {
        if (options.mode() != RedisStoreOptions.Mode.CLUSTER) {
            return open(options, null, () -> { });
        }
        ScheduledExecutorService own = Executors.newSingleThreadScheduledExecutor(task -> {
            Thread thread = new Thread(task, "idemkey-redis-topology");
            thread.setDaemon(true);
            return thread;
        });
        return open(options, own, own::shutdownNow);
    }

    /**
     * A store as the options say, whose background work (a cluster's topology refreshes) runs on
     * {@code background}, which it does not shut down (it cancels its own tasks when it closes).
     */
    public static RedisIdempotencyStore open(RedisStoreOptions options, ScheduledExecutorService background) {
        return open(options, background, () -> { });
    }

    private static RedisIdempotencyStore open(RedisStoreOptions options, ScheduledExecutorService background,
                                              Runnable afterClose) {
        return openWith(options, () -> options.createClient(background), afterClose);
    }

    /** A store as the options say, on the client {@code connect} makes (a test keeps it to reach the pool). */
    static RedisIdempotencyStore openWith(RedisStoreOptions options, Supplier<RedisStoreOptions.Connected> connect,
                                          Runnable afterClose) {
        RedisIdempotencyStore store = new RedisIdempotencyStore(connect, afterClose,
                options.description(), options.waitReplicas(), options.waitTimeout(),
                options.coalesce() ? new CoalescedCalls(RECORD, CoalescedCalls.MAX_BATCH, options.coalesceLinger()) : null);
        try {
            store.connected();
        } catch (StoreUnavailableException | StoreAccessDeniedException e) {
            // no node answers yet, or one refused the credentials: the first call tries again, and says so
        }
        return store;
    }

    /**
     * The record script's acquire (without a rate limit) as two plain commands in one round trip:
     * {@code SET key <in-progress record> NX PX <lock TTL> GET}, which creates the record where the
     * key is free and otherwise answers with the record there, in one atomic step as the script
     * does, and {@code PTTL key}, the time that record has left: read just after, so only advisory
     * (a conflict's {@code Retry-After}, how long a replay is cached), as the owner may complete in
     * between. Redis spends about half of the script's work on them (docs/performance.md, "An
     * acquire without a script"). The script's "the same token again" branch (an acquire sent again
     * after its reply was lost finds its own record) is a renewal here: the lease is whole again,
     * as the script makes it, or, lost meanwhile, the key is acquired anew. A Redis before 7.0,
     * which refuses {@code GET} beside {@code NX}, gets the script from its first refusal on.
     */
    @Override
    public AcquireResult acquire(String recordKey, byte[] fingerprint, String ownerToken, Duration lockTtl) {
        checkSizes(fingerprint, ownerToken);
        if (setGetRefused) {
            return scriptAcquire(recordKey, fingerprint, bytes(ownerToken), millis(lockTtl));
        }
        byte[] key = bytes(recordKey);
        byte[] token = bytes(ownerToken);
        byte[] record = inProgressRecord(fingerprint, token);
        byte[] ttl = millis(lockTtl);
        Function<Boolean, CoalescedCalls.Request> commands = asking -> pipeline -> {
            if (asking) {
                pipeline.sendCommand(Protocol.Command.ASKING, new byte[0][]);
            }
            Response<Object> found = pipeline.sendCommand(Protocol.Command.SET, key, record, NX, PX, ttl, GET);
            if (asking) {
                pipeline.sendCommand(Protocol.Command.ASKING, new byte[0][]);
            }
            Response<Long> left = pipeline.pttl(key);
            // acquired whatever PTTL answered (a slot migrating between the two redirects only the second)
            return () -> {
                Object existing = found.get();
                return existing == null ? Arrays.asList(null, 0L) : Arrays.asList(existing, left.get());
            };
        };
        for (int attempt = 1; ; attempt++) {
            List<?> replies;
            try {
                replies = (List<?>) execute(client -> writeRefused(() -> coalesced == null ? onMaster(key, commands)
                        : coalescedOnMaster(key, commands)));
            } catch (JedisDataException e) {
                if (!String.valueOf(e.getMessage()).startsWith("ERR syntax error")) {
                    throw e;
                }
                setGetRefused = true; // SET's GET beside NX came with Redis 7.0
                LOG.info(() -> "Idemkey: Redis at " + description + " refuses SET ... NX ... GET (a Redis before 7.0):"
                        + " acquires run the record script from now on");
                return scriptAcquire(recordKey, fingerprint, token, ttl);
            }
            if (replies == null) {
                // a full Redis, or one short of replicas, refuses every SET, even one that would write
                // nothing; the script only its first write: a replay or a conflict still gets its answer
                return scriptAcquire(recordKey, fingerprint, token, ttl);
            }
            byte[] found = (byte[]) replies.get(0);
            if (found == null) {
                return AcquireResult.ACQUIRED;
            }
            AcquireResult existing = existing(recordKey, found, fingerprint, token, (Long) replies.get(1));
            if (existing != null) {
                return existing;
            }
            // its own record: renewed, as the script's acquire would; or lost since, then acquired anew
            if (renew(recordKey, ownerToken, lockTtl) == Renewal.RENEWED) {
                return AcquireResult.ACQUIRED;
            }
            if (attempt == 3) {
                return new AcquireResult.InProgress(Duration.ZERO); // the key keeps changing hands: a conflict
            }
        }
    }

    /**
     * The acquire's commands' reply, or null where Redis refused the {@code SET} before looking at
     * the key because it may not write now: out of memory under {@code noeviction} ({@code -OOM}),
     * or fewer replicas than {@code min-replicas-to-write} ({@code -NOREPLICAS}).
     */
    private static Object writeRefused(Supplier<Object> commands) {
        try {
            return commands.get();
        } catch (JedisDataException e) {
            String message = String.valueOf(e.getMessage());
            if (message.startsWith("OOM") || message.startsWith("NOREPLICAS")) {
                return null;
            }
            throw e;
        }
    }

    /** The record script's acquire, without a rate limit: for a Redis that refuses the plain commands. */
    private AcquireResult scriptAcquire(String recordKey, byte[] fingerprint, byte[] token, byte[] ttl) {
        return acquired((List<?>) run(recordKey, ACQUIRE, fingerprint, token, ttl));
    }

    /** An in-progress record: {@code P}, the fingerprint and the owner token, each after its length ({@code record.lua}). */
    private static byte[] inProgressRecord(byte[] fingerprint, byte[] token) {
        return record('P', fingerprint, token, token.length, new byte[0]);
    }

    /** A completed record: {@code C}, the fingerprint, the first bytes of the owner token and the response ({@code record.lua}). */
    private static byte[] completedRecord(byte[] fingerprint, byte[] token, byte[] response) {
        return record('C', fingerprint, token, Math.min(KEPT_TOKEN_BYTES, token.length), response);
    }

    /** A record as {@code record.lua} lays it out: its state, the fingerprint and {@code kept} bytes of the token, each after its length, then the response. */
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
     */
    private static AcquireResult existing(String recordKey, byte[] record, byte[] fingerprint, byte[] token, long left) {
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

    /**
     * The request counter of a record key: the record key, then a suffix, so it starts with
     * whatever the record key starts with (the key prefix a Redis ACL user is limited to), and it
     * lands in the record's Redis Cluster slot: {@code <record key>{<record key>}#requests}, whose
     * hash tag is the record key (a record key holds no brace: scope and key are percent-encoded),
     * or, where the prefix carries a hash tag already, {@code <record key>#requests}, which hashes
     * by that tag. {@code #} never occurs in a record key, so a counter never names a record.
     */
    static String counterKey(String recordKey) {
        return recordKey.indexOf('{') >= 0 ? recordKey + "#requests" : recordKey + "{" + recordKey + "}#requests";
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

    /**
     * The completion script; with {@code wait-replicas}, followed in the same round trip by
     * {@code WAIT} on the same connection (in a cluster: to the record's master), which returns once
     * that many replicas have everything this connection wrote, the completion included, or at the
     * timeout. A completion retried after its reply was lost finds itself made by the same owner
     * and writes the record again as it is, so that its {@code WAIT} also covers the first write:
     * from Redis 7.2 on, a connection that wrote nothing has nothing to wait for, and its
     * {@code WAIT} counts every replica at once (up to 7.0, any command before it would do). A
     * completion the replicas did not all acknowledge in time is logged and counted, and still
     * reported: the master has it, and the caller's response must go out.
     */
    @Override
    public boolean complete(String recordKey, String ownerToken, byte[] response, Duration ttl) {
        if (waitReplicas == 0) {
            return applied(run(recordKey, COMPLETE, bytes(ownerToken), response, millis(ttl)));
        }
        List<byte[]> keys = List.of(bytes(recordKey));
        List<byte[]> argv = List.of(COMPLETE, bytes(ownerToken), response, millis(ttl));
        List<?> replies;
        try {
            replies = execute(client -> completionWithWait(keys, argv, RECORD.sha1()));
        } catch (JedisNoScriptException e) {
            replies = execute(client -> completionWithWait(keys, argv, null));
        }
        boolean applied = applied(replies.get(0));
        if (applied) {
            checkReplicated(recordKey, (Long) replies.get(1));
        }
        return applied;
    }

    /** A completion fewer than {@code wait-replicas} replicas acknowledged in time is logged and counted. */
    private void checkReplicated(String recordKey, long acknowledged) {
        if (acknowledged < waitReplicas) {
            notReplicated.increment();
            whenNotReplicated.run();
            LOG.warning("Idemkey: the completion of the record " + recordKey + " was acknowledged by " + acknowledged
                    + " of the " + waitReplicas + " replicas wanted within " + waitTimeoutMillis + " ms: it is on the master"
                    + " only, and a failover now may forget it (idempotency.redis.wait-replicas)");
        }
    }

    /**
     * The completion as one plain command where Redis has a compare-and-set (Valkey from 8.1, Redis
     * from 8.4): {@code SET key <completed record> IFEQ <this owner's record in progress> PX <ttl>}
     * writes only where the key still holds the very record this owner's acquire wrote, which is the
     * record script's "in progress under this token" branch in one atomic step, without the
     * script's cost to Redis (docs/performance.md). Where it writes nothing (the lease was lost, or
     * this owner's completion, sent again after its reply was lost, finds itself done), the script
     * decides as it always did. A Redis without {@code IFEQ} refuses it as a syntax error, before
     * it looks at the key: from then on completions run the script alone. With
     * {@code wait-replicas}, {@code WAIT} follows on the same connection, as after the script; where
     * the command wrote nothing, that {@code WAIT} waits for the connection's earlier writes, and the
     * script's own {@code WAIT} after it: such a completion (a lost lease, a completion sent again,
     * one refused for too few replicas) may take up to twice {@code wait-timeout}.
     */
    @Override
    public boolean complete(String recordKey, String ownerToken, byte[] fingerprint, byte[] response, Duration ttl) {
        byte[] token = bytes(ownerToken);
        if (!setIfeqRefused && fingerprint.length <= 255 && token.length <= 255
                && completedWithoutScript(recordKey, fingerprint, token, response, ttl)) {
            return true;
        }
        return complete(recordKey, ownerToken, response, ttl);
    }

    /**
     * The {@code SET ... IFEQ} of {@link #complete(String, String, byte[], byte[], Duration)}: true if
     * it completed the record, false where it wrote nothing or was refused (the script decides).
     */
    private boolean completedWithoutScript(String recordKey, byte[] fingerprint, byte[] token, byte[] response,
                                           Duration ttl) {
        byte[] key = bytes(recordKey);
        byte[] expected = inProgressRecord(fingerprint, token);
        byte[] completed = completedRecord(fingerprint, token, response);
        byte[] px = millis(ttl);
        Function<Boolean, CoalescedCalls.Request> commands = asking -> pipeline -> {
            if (asking) {
                pipeline.sendCommand(Protocol.Command.ASKING, new byte[0][]);
            }
            Response<Object> set = pipeline.sendCommand(Protocol.Command.SET, key, completed, IFEQ, expected, PX, px);
            Response<Long> waited = waitReplicas == 0 ? null : pipeline.waitReplicas(waitReplicas, waitTimeoutMillis);
            return () -> Arrays.asList(set.get(), waited == null ? null : waited.get());
        };
        List<?> replies;
        try {
            // a completion that waits for replicas keeps a connection of its own (what its WAIT covers)
            replies = (List<?>) execute(client -> writeRefused(() -> coalesced == null || waitReplicas > 0
                    ? onMaster(key, commands) : coalescedOnMaster(key, commands)));
        } catch (JedisDataException e) {
            // an error reply wrote nothing: a Redis without IFEQ (a syntax error; a proxy may say it
            // knows no such option) from now on, anything else (a key holding no string) for this
            // call, runs the script
            String message = String.valueOf(e.getMessage());
            if (message.startsWith("ERR syntax error") || message.startsWith("ERR unknown")
                    || message.startsWith("ERR unsupported")) {
                setIfeqRefused = true;
                LOG.info(() -> "Idemkey: Redis at " + description + " refuses SET ... IFEQ (" + message + "; a Redis before"
                        + " 8.4, a Valkey before 8.1): completions run the record script from now on");
            }
            return false;
        }
        if (replies == null || replies.get(0) == null) {
            // refused for now (out of memory, too few replicas: the script writes nothing where it need not),
            // or not this owner's record in progress (its lease lost, or its own completion sent again,
            // whose WAIT, if any, waited for this connection's earlier writes): the script tells
            return false;
        }
        if (waitReplicas > 0) {
            checkReplicated(recordKey, (Long) replies.get(1));
        }
        return true;
    }

    /** The completion and {@code WAIT} in one pipeline on a connection to the record's master ({@link #onMaster}): {reply, replicas that acknowledged}. */
    private List<?> completionWithWait(List<byte[]> keys, List<byte[]> argv, byte[] sha1) {
        return (List<?>) onMaster(keys.get(0), asking -> pipeline -> {
            if (asking) {
                pipeline.sendCommand(Protocol.Command.ASKING, new byte[0][]);
            }
            Response<Object> completed = script(pipeline, keys, argv, sha1);
            Response<Long> waited = pipeline.waitReplicas(waitReplicas, waitTimeoutMillis);
            return () -> List.of(completed.get(), waited.get());
        });
    }

    /**
     * Commands pipelined on a connection to the master of {@code key}; their reply. In a cluster
     * whose slot moved (a failover, a resharding) since the client last asked, the node answers
     * with a redirection and runs the command it redirects (and, for a slot being migrated, those
     * of the others it does not hold); the commands then go to the node it names, whether the
     * client knew that node or not (an ASK to a master a scale-out has just added), with
     * {@code ASKING} before each where the slot is being migrated ({@code commands} is given
     * true), and after a MOVED the client asks the node that said so for the slots; up to
     * {@value #REDIRECTIONS} redirections in a row, as the cluster client follows them. One more
     * is thrown, an outage for this call ({@link #attempt}), as an error reply is.
     */
    private Object onMaster(byte[] key, Function<Boolean, CoalescedCalls.Request> commands) {
        Masters masters = connected().masters();
        HostAndPort node = masters.masterOf(key);
        boolean asking = false;
        for (int redirections = 0; ; redirections++) {
            try (Connection connection = masters.connection(node)) {
                Pipeline pipeline = new Pipeline(connection);
                Supplier<Object> reply;
                try {
                    reply = commands.apply(asking).addTo(pipeline);
                    pipeline.sync(); // every reply is read: the connection goes back to the pool clean
                } catch (RuntimeException | Error e) {
                    connection.setBroken(); // commands written whose replies nobody read: never pooled again
                    throw e;
                }
                try {
                    return reply.get(); // an error reply throws here, to be classified by attempt
                } catch (JedisRedirectionException e) {
                    if (redirections == REDIRECTIONS) {
                        throw e;
                    }
                    if (e instanceof JedisMovedDataException) {
                        try {
                            masters.moved(connection);
                        } catch (RuntimeException notAsked) {
                            // the redirection is followed all the same; the next call's sending finds out
                        }
                    }
                    node = e.getTargetNode();
                    asking = e instanceof JedisAskDataException;
                }
            }
        }
    }

    /**
     * Commands in a batch of calls to the master of {@code key} ({@link CoalescedCalls}); where the
     * client knows no master for its slot, or the slot moved since (a redirection), as a call of
     * their own ({@link #onMaster}), which follows the redirection: the commands are written so
     * that running them again is harmless (an acquire that finds its own record renews it).
     */
    private Object coalescedOnMaster(byte[] key, Function<Boolean, CoalescedCalls.Request> commands) {
        Masters masters = connected().masters();
        HostAndPort master = masters.masterOf(key);
        if (master == null) {
            return onMaster(key, commands);
        }
        try {
            return coalesced.call(masters, master, commands.apply(false));
        } catch (JedisRedirectionException e) {
            return onMaster(key, commands);
        }
    }

    /** Runs {@code action} for each completion fewer than {@code wait-replicas} replicas acknowledged in time (to count it). */
    public void whenNotReplicated(Runnable action) {
        this.whenNotReplicated = action;
    }

    /** Completions that fewer than {@code wait-replicas} replicas acknowledged in time, since the store opened. */
    public long completionsNotReplicated() {
        return notReplicated.sum();
    }

    @Override
    public boolean release(String recordKey, String ownerToken) {
        return applied(run(recordKey, RELEASE, bytes(ownerToken)));
    }

    @Override
    public Renewal renew(String recordKey, String ownerToken, Duration lockTtl) {
        return renewal(run(recordKey, RENEW, bytes(ownerToken), millis(lockTtl)));
    }

    /**
     * The leases' renewals pipelined: one round trip for all of them (in a cluster, one per master
     * that holds some of them), each still its own script call on its own record.
     */
    @Override
    public Renewal[] renew(List<Lease> leases) {
        List<Object> replies;
        try {
            replies = execute(client -> renewals(client, leases, RECORD.sha1()));
        } catch (JedisNoScriptException e) {
            replies = execute(client -> renewals(client, leases, null));
        }
        Renewal[] renewed = new Renewal[leases.size()];
        for (int i = 0; i < renewed.length; i++) {
            renewed[i] = renewal(replies.get(i));
        }
        return renewed;
    }

    /** A renewal's reply: Redis runs every script alone, so a record is never held (no {@link Renewal#UNKNOWN}). */
    private static Renewal renewal(Object reply) {
        return applied(reply) ? Renewal.RENEWED : Renewal.LOST;
    }

    /**
     * The renewals as one pipeline per master that holds some of them, by the script's SHA-1, or
     * with its text where {@code sha1} is null. The masters are asked one after another on this
     * thread (Jedis's cluster pipeline would start threads for each call, and swallow both an
     * interrupt and a connection's failure): every master that answers gets its renewals, and one
     * that does not is reported after them, with its own exception (a read timeout as a timeout).
     * A renewal a cluster node redirected (its slot moved) runs again as a command of its own,
     * which follows the redirection and refreshes the client's slots.
     */
    private List<Object> renewals(UnifiedJedis client, List<Lease> leases, byte[] sha1) {
        Masters masters = connected().masters();
        Map<HostAndPort, List<Integer>> byMaster = new LinkedHashMap<>();
        List<List<byte[]>> arguments = new ArrayList<>(leases.size());
        for (int i = 0; i < leases.size(); i++) {
            Lease lease = leases.get(i);
            arguments.add(List.of(RENEW, bytes(lease.ownerToken()), millis(lease.lockTtl())));
            byMaster.computeIfAbsent(masters.masterOf(bytes(lease.recordKey())), master -> new ArrayList<>()).add(i);
        }
        List<Response<Object>> responses = new ArrayList<>(Collections.nCopies(leases.size(), null));
        JedisException unanswered = null;
        for (Map.Entry<HostAndPort, List<Integer>> master : byMaster.entrySet()) {
            try (Connection connection = masters.connection(master.getKey())) {
                Pipeline pipeline = new Pipeline(connection);
                for (int i : master.getValue()) {
                    responses.set(i, script(pipeline, List.of(bytes(leases.get(i).recordKey())), arguments.get(i), sha1));
                }
                pipeline.sync(); // every reply is read: the connection goes back to the pool clean
            } catch (JedisException e) {
                if (unanswered == null) {
                    unanswered = e;
                } else {
                    unanswered.addSuppressed(e);
                }
            }
        }
        if (unanswered != null) {
            throw unanswered;
        }
        List<Object> replies = new ArrayList<>(responses.size());
        for (int i = 0; i < responses.size(); i++) {
            try {
                replies.add(responses.get(i).get()); // an error reply throws here, to be classified by attempt
            } catch (JedisRedirectionException moved) {
                replies.add(script(client, List.of(bytes(leases.get(i).recordKey())), arguments.get(i)));
            }
        }
        return replies;
    }

    /** The record script in a pipeline: by its SHA-1, or its text where {@code sha1} is null. */
    private static Response<Object> script(AbstractPipeline pipeline, List<byte[]> keys, List<byte[]> argv, byte[] sha1) {
        return sha1 != null ? pipeline.evalsha(sha1, keys, argv) : pipeline.eval(RECORD.source(), keys, argv);
    }

    /** The record script as one command: by its SHA-1, and with its text once where the node never saw it. */
    private static Object script(UnifiedJedis client, List<byte[]> keys, List<byte[]> argv) {
        try {
            return client.evalsha(RECORD.sha1(), keys, argv);
        } catch (JedisNoScriptException e) {
            return client.eval(RECORD.source(), keys, argv);
        }
    }

    @Override
    public Optional<StoredRecord> inspect(String recordKey) {
        return stored(recordKey, (List<?>) run(recordKey, INSPECT));
    }

    @Override
    public Purge purge(String recordKey, boolean force) {
        long outcome = (Long) run(recordKey, PURGE, bytes(force ? "1" : "0"));
        return outcome > 0 ? Purge.PURGED : outcome == 0 ? Purge.ABSENT : Purge.IN_PROGRESS;
    }

    /**
     * {@code SCAN} with {@code MATCH <prefix>*} on each master in turn ({@link Masters#all()}: one for
     * a server or Sentinel, each of a cluster's), then the record script's {@code listed} for the
     * keys found, pipelined on the same connection: it answers only for a record in progress (a few
     * hundred bytes at most), so no completed record's response leaves Redis. The cursor is the master's index and its SCAN
     * cursor, {@code <index>:<cursor>}; a page makes at most {@value #SCANS_PER_PAGE} SCAN calls
     * of {@code COUNT} max(100, limit), stops once it holds the limit (the last call's records
     * all kept: a SCAN cursor cannot stop half-way, so a page may hold up to one call's records more),
     * and stops at the end of a master (so a key a failover
     * moves between masters may be seen twice, or, when a cluster's masters change while the pages
     * are walked, missed on that walk).
     */
    @Override
    public Page inProgress(String keyPrefix, String cursor, int limit) {
        StoreInspection.checkLimit(limit);
        int master = 0;
        String scanCursor = "0";
        if (!cursor.isEmpty()) {
            int colon = cursor.indexOf(':');
            try {
                master = Integer.parseInt(cursor.substring(0, Math.max(0, colon)));
                scanCursor = Long.toUnsignedString(Long.parseUnsignedLong(cursor.substring(colon + 1)));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("not a cursor of the Redis store: " + cursor);
            }
            if (master < 0) {
                throw new IllegalArgumentException("not a cursor of the Redis store: " + cursor);
            }
        }
        int startMaster = master;
        String startCursor = scanCursor;
        return execute(client -> page(keyPrefix, startMaster, startCursor, limit));
    }

    private Page page(String keyPrefix, int masterIndex, String scanCursor, int limit) {
        Masters masters = connected().masters();
        List<HostAndPort> all = masters.all();
        if (masterIndex >= all.size()) {
            return new Page(List.of(), "");
        }
        List<StoredRecord> found = new ArrayList<>();
        String next = scanCursor;
        try (Connection connection = masters.connection(all.get(masterIndex))) {
            byte[] sha1 = (byte[]) connection.executeCommand(
                    new CommandArguments(Protocol.Command.SCRIPT).add("LOAD").add(RECORD.source()));
            ScanParams match = new ScanParams().match(globEscaped(keyPrefix) + "*").count(Math.max(100, limit));
            for (int scans = 0; scans < SCANS_PER_PAGE && found.size() < limit; scans++) {
                Pipeline pipeline = new Pipeline(connection);
                Response<ScanResult<byte[]>> scanned = pipeline.scan(bytes(next), match);
                pipeline.sync();
                next = scanned.get().getCursor();
                // a record key never holds '#' (percent-encoded): what ends in #requests is a rate-limit counter
                List<byte[]> keys = scanned.get().getResult().stream()
                        .filter(key -> !new String(key, StandardCharsets.UTF_8).endsWith("#requests")).toList();
                Pipeline inspections = new Pipeline(connection);
                List<Response<Object>> replies = new ArrayList<>(keys.size());
                for (byte[] key : keys) {
                    replies.add(inspections.evalsha(sha1, List.of(key), List.of(LISTED)));
                }
                inspections.sync();
                for (int i = 0; i < keys.size(); i++) {
                    Object reply;
                    try {
                        reply = replies.get(i).get();
                    } catch (JedisDataException notARecord) { // moved away meanwhile, or a key of another kind
                        if (notARecord instanceof JedisAccessControlException || refusedInScript(notARecord)) {
                            throw notARecord; // refused to this user: attempt says so
                        }
                        continue;
                    }
                    stored(new String(keys.get(i), StandardCharsets.UTF_8), (List<?>) reply)
                            .filter(record -> !record.completed())
                            .ifPresent(found::add);
                }
                if ("0".equals(next)) {
                    break;
                }
            }
        }
        String nextCursor = "0".equals(next) ? (masterIndex + 1 < all.size() ? (masterIndex + 1) + ":0" : "")
                : masterIndex + ":" + next;
        return new Page(found, nextCursor);
    }

    /** A record script's {@code inspect} reply as a record: state, fingerprint, token, response ({@code record.lua}). */
    private static Optional<StoredRecord> stored(String recordKey, List<?> reply) {
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

    /** {@code prefix} as a SCAN MATCH pattern that matches it literally. */
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

    /**
     * Sends each command the store's calls may send, once, on a key of its own under
     * {@code keyPrefix} ({@value #PERMISSION_CHECK_KEY} and a random number after it, which no
     * record key can be: those hold a {@code :} after the prefix), so that a Redis user without one
     * of them is found when the application starts, not by each request: {@code PING}; a
     * rate-limited acquire (the record script: {@code EVALSHA}, {@code GET}, {@code INCR},
     * {@code PEXPIRE}, {@code SET}) when {@code rateLimited}; an acquire ({@code SET ... GET},
     * {@code PTTL}, or the script); a renewal ({@code PEXPIRE}); the script by its text
     * ({@code EVAL}); a completion ({@code SET}, and {@code WAIT} with {@code wait-replicas}); with
     * {@code listed}, a page of the records in progress ({@code SCAN}, {@code SCRIPT LOAD}); and a
     * purge ({@code DEL}). The record lives 10 s at most and is deleted at the end; a counter, for
     * its 10 s window.
     *
     * @throws StoreAccessDeniedException naming what Redis refused, and the rule the user needs
     * @throws StoreUnavailableException if Redis does not answer now (the first refused call says what is missing)
     */
    public void checkPermissions(String keyPrefix, boolean rateLimited, boolean listed) {
        String token = Long.toHexString(new SecureRandom().nextLong());
        String key = keyPrefix + PERMISSION_CHECK_KEY + token;
        byte[] fingerprint = new byte[16];
        Duration ttl = Duration.ofSeconds(10);
        checked(keyPrefix, key, "PING", () -> execute(UnifiedJedis::ping));
        if (rateLimited) {
            checked(keyPrefix, key, "a rate-limited acquire of " + key + " (its counter: " + counterKey(key) + ")",
                    () -> acquire(key, fingerprint, token, ttl, new RateLimit(1_000_000, ttl)));
        }
        checked(keyPrefix, key, "an acquire of " + key, () -> acquire(key, fingerprint, token, ttl));
        checked(keyPrefix, key, "a renewal of " + key, () -> renew(key, token, ttl));
        checked(keyPrefix, key, "EVAL of the record script on " + key,
                () -> execute(client -> client.eval(RECORD.source(), List.of(bytes(key)), List.of(INSPECT))));
        checked(keyPrefix, key, "a completion of " + key, () -> complete(key, token, fingerprint, new byte[1], ttl));
        if (listed) {
            checked(keyPrefix, key, "a page of the records in progress under " + keyPrefix, () -> inProgress(key, "", 1));
        }
        checked(keyPrefix, key, "a purge of " + key, () -> purge(key, true));
    }

    /**
     * One step of {@link #checkPermissions}; a refusal names the step, the command Redis refused
     * (where a script's command was refused, Redis 7.0 does not say which: each the record script
     * calls is then sent alone, and the first refused named), and the rule for this prefix.
     */
    private void checked(String keyPrefix, String key, String step, Runnable call) {
        try {
            call.run();
        } catch (StoreAccessDeniedException e) {
            String reply = replyOf(e);
            if (credentialsRefused(reply)) {
                throw e;
            }
            String alone = e.getCause() instanceof JedisDataException script && refusedInScript(script)
                    ? scriptCommandRefused(key).map(refused -> "; of the commands the record script calls, Redis refuses "
                            + refused).orElse("") : "";
            throw new StoreAccessDeniedException("Redis at " + description + " refuses " + step
                    + " to the user Idemkey connects as: " + withoutFullStop(reply) + alone + ". That user needs the ACL rule "
                    + aclRule(keyPrefix) + " (docs/security.md)", e.getCause());
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
        Map<String, Function<UnifiedJedis, Object>> commands = new LinkedHashMap<>();
        commands.put("GET", client -> client.get(record));
        commands.put("PTTL", client -> client.pttl(record));
        commands.put("SET", client -> client.set(record, new byte[1], SetParams.setParams().px(ttl)));
        commands.put("PEXPIRE", client -> client.pexpire(record, ttl));
        commands.put("DEL", client -> client.del(record));
        commands.put("INCR", client -> client.incr(counter) + client.pexpire(counter, ttl));
        for (Map.Entry<String, Function<UnifiedJedis, Object>> command : commands.entrySet()) {
            try {
                execute(command.getValue());
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

    private static String withoutFullStop(String reply) {
        String trimmed = reply.strip();
        while (trimmed.endsWith(".")) {
            trimmed = trimmed.substring(0, trimmed.length() - 1);
        }
        return trimmed;
    }

    @Override
    public boolean isAvailable() {
        try {
            return "PONG".equals(execute(UnifiedJedis::ping));
        } catch (RuntimeException e) {
            return false;
        }
    }

    /**
     * Closes the client and stops the background work; from now on every call is an outage, and
     * no client is made any more (a store closed before a node ever answered would otherwise make
     * one on its next call: pools, and Sentinel's listener threads, that nobody closes).
     */
    @Override
    public void close() {
        RedisStoreOptions.Connected opened;
        synchronized (this) {
            closed = true;
            opened = connected;
            connected = null;
        }
        try {
            if (opened != null) {
                opened.close();
            }
        } finally {
            afterClose.run();
        }
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
        return coalesced == null ? execute(client -> script(client, keys, argv))
                : execute(client -> coalescedScript(client, keys, argv));
    }

    /**
     * The record script in a batch of calls to the key's master ({@link CoalescedCalls}): by its
     * SHA-1, and with its text once where the node never saw it, as {@link #script(UnifiedJedis, List, List)}.
     * A cluster whose slot moved since the client last asked answers with a redirection and runs
     * nothing: the call then goes as a command of its own through the cluster client, which follows
     * the redirection (as a redirected renewal does); so does a call whose slot has no known master.
     */
    private Object coalescedScript(UnifiedJedis client, List<byte[]> keys, List<byte[]> argv) {
        Masters masters = connected().masters();
        HostAndPort master = masters.masterOf(keys.get(0));
        if (master == null) {
            return script(client, keys, argv);
        }
        try {
            try {
                return coalesced.call(masters, master, keys, argv, false);
            } catch (JedisNoScriptException e) {
                return coalesced.call(masters, master, keys, argv, true);
            }
        } catch (JedisRedirectionException e) {
            return script(client, keys, argv);
        }
    }

    /** The coalescing path's calls (null without it), for tests. */
    CoalescedCalls coalesced() {
        return coalesced;
    }

    /**
     * Commands on the client, as {@link #attemptAgainIfBroken}; a call that ends in an outage tells
     * the masters, which in a cluster look at the topology again (a failover may be under way).
     */
    private <T> T execute(Function<UnifiedJedis, T> commands) {
        try {
            return attemptAgainIfBroken(commands);
        } catch (StoreUnavailableException outage) {
            RedisStoreOptions.Connected current = connected;
            if (current != null) {
                current.masters().unanswered();
            }
            throw outage;
        }
    }

    /**
     * Commands on the client; retried once, with the idle pooled connections dropped, if a
     * connection turned out to be broken (Redis restarted, a proxy cut it): those idle beside it
     * are likely as stale. Not after a timeout, connecting or reading: Redis is slow or out of
     * reach, not restarted, waiting twice would not help, and a command it may have run (a
     * completion with {@code WAIT}, a batch of renewals) is not sent again.
     */
    private <T> T attemptAgainIfBroken(Function<UnifiedJedis, T> commands) {
        try {
            return attempt(commands);
        } catch (JedisConnectionException first) {
            if (timedOut(first)) {
                throw unavailable(first);
            }
            connected().dropIdleConnections().run();
            try {
                return attempt(commands);
            } catch (JedisConnectionException second) {
                throw unavailable(second);
            }
        }
    }

    /**
     * The commands on the client. Every reply is classified here, on the first try and the retry
     * alike, on Jedis's typed exceptions where it has them: "not now" replies ({@code -LOADING}
     * after a restart, {@code -CLUSTERDOWN}, ...) are outages, and so is a cluster that keeps
     * redirecting; a cluster client that used up its own attempts on broken connections counts as
     * one broken connection; a refusal of the credentials or of a permission is neither
     * ({@link #denied}).
     */
    private <T> T attempt(Function<UnifiedJedis, T> commands) {
        try {
            return commands.apply(connected().client());
        } catch (JedisNoScriptException | JedisConnectionException e) {
            throw e;
        } catch (JedisAccessControlException e) {
            throw denied(e);
        } catch (JedisClusterOperationException e) {
            JedisConnectionException broken = brokenConnection(e);
            JedisAccessControlException refused = accessControl(e, 8);
            throw broken != null ? broken : refused != null ? denied(refused) : unavailable(e);
        } catch (JedisRedirectionException | JedisClusterException | JedisBusyException e) {
            // the slots moved faster than the client followed; no master for a slot; a script running too long
            throw unavailable(e);
        } catch (JedisDataException e) {
            if (refusedInScript(e)) {
                throw denied(e);
            }
            throw transientReply(e) ? unavailable(e) : e;
        } catch (JedisException e) {
            if (e.getCause() instanceof NoSuchElementException) {
                throw unavailable(e); // no free pooled connection within the wait limit
            }
            if (NO_CONNECTION_FROM_POOL.equals(e.getMessage())) { // not Jedis's other pool failures (giving a connection back)
                if (e.getCause() instanceof IllegalStateException) {
                    // the pool was closed as the call took a connection from it (a cluster's topology
                    // refresh dropped a node that left): the command was not sent, so it goes again,
                    // as on a broken connection
                    throw new JedisConnectionException(e.getMessage(), e);
                }
                if (e.getCause() instanceof InterruptedException) {
                    throw unavailable(e); // the pool closed while the call waited for a connection
                }
            }
            throw e;
        }
    }

    /** The broken connection a cluster client's attempts ended on, if that is how they ended. */
    private static JedisConnectionException brokenConnection(JedisClusterOperationException e) {
        List<Throwable> last = new ArrayList<>(Arrays.asList(e.getSuppressed()));
        last.add(e.getCause());
        for (Throwable failure : last) {
            if (failure instanceof JedisConnectionException broken) {
                return new JedisConnectionException(e.getMessage(), broken);
            }
        }
        return null;
    }

    /** The client, made on first use (and again until a sentinel or cluster node answers), never once closed. */
    private RedisStoreOptions.Connected connected() {
        RedisStoreOptions.Connected current = connected;
        if (current != null) {
            return current;
        }
        synchronized (this) {
            if (closed) {
                throw new StoreUnavailableException("the Redis store at " + description + " is closed", null);
            }
            if (connected == null) {
                try {
                    connected = connect.get();
                } catch (JedisAccessControlException e) {
                    throw denied(e); // a node answered, and refused the credentials (or CLUSTER SLOTS)
                } catch (JedisDataException e) {
                    throw e; // a node answered, and refused
                } catch (JedisException e) {
                    JedisAccessControlException refused = accessControl(e, 8);
                    throw refused != null ? denied(refused) : unavailable(e);
                }
            }
            return connected;
        }
    }

    private StoreUnavailableException unavailable(JedisException e) {
        return new StoreUnavailableException("Redis at " + description + " is unavailable: " + e.getMessage(), e);
    }

    /**
     * Redis refused the credentials ({@code WRONGPASS}; {@code NOAUTH}: none given where Redis wants
     * them) or a command or key to the user ({@code NOPERM}, or the record script's error for a
     * command it called, {@link #refusedInScript}): a configuration error, not an outage; the
     * message says what the user needs.
     */
    private StoreAccessDeniedException denied(JedisDataException e) {
        String reply = String.valueOf(e.getMessage());
        boolean credentials = credentialsRefused(reply);
        return new StoreAccessDeniedException("Redis at " + description + (credentials
                ? " does not accept the user and password Idemkey connects with: " + reply
                : " refuses a command or a key to the user Idemkey connects as: " + withoutFullStop(reply)
                        + ". That user needs the ACL rule "
                        + aclRule("<key prefix>") + " (docs/security.md)"), e);
    }

    private static boolean credentialsRefused(String reply) {
        return reply.startsWith("WRONGPASS") || reply.startsWith("NOAUTH");
    }

    /**
     * A command or key the record script called that the user may not use: Redis answers an error
     * of the script's, not {@code NOPERM} (a script's declared keys are checked before it runs, and
     * refused with {@code NOPERM}), which Jedis has no type for: {@code ERR ACL failure in script: ...}
     * from Redis 7.2 and in Valkey, {@code ERR The user executing the script can't run this command
     * or subcommand} in Redis 7.0.
     */
    static boolean refusedInScript(JedisDataException e) {
        String reply = String.valueOf(e.getMessage());
        return reply.startsWith("ERR ACL failure in script") || reply.startsWith("ERR The user executing the script can't");
    }

    /** The refusal of credentials or permissions among {@code e}'s causes and suppressed exceptions (a client's start, a cluster's attempts), if any. */
    private static JedisAccessControlException accessControl(Throwable e, int depth) {
        if (e == null || depth == 0) {
            return null;
        }
        if (e instanceof JedisAccessControlException refused) {
            return refused;
        }
        JedisAccessControlException found = accessControl(e.getCause(), depth - 1);
        for (Throwable suppressed : e.getSuppressed()) {
            if (found == null) {
                found = accessControl(suppressed, depth - 1);
            }
        }
        return found;
    }

    /**
     * The Redis ACL rule a user of Idemkey's needs whose records' keys start with {@code keyPrefix}:
     * the keys that start with it ({@code ~<prefix>*}: records, and the rate limit's counters, which
     * start with their record's key) and {@link #ACL_COMMANDS}.
     */
    public static String aclRule(String keyPrefix) {
        return "~" + globEscaped(keyPrefix) + "* " + ACL_COMMANDS;
    }

    /**
     * Replies that mean "not now", not a defect: a replica, a restart still loading its data, memory
     * full, a master without its replicas (or with fewer than {@code min-replicas-to-write}), a key
     * being migrated. Jedis has no types for these. (A refusal of the credentials or of a permission,
     * {@code NOAUTH}, {@code WRONGPASS}, {@code NOPERM}, is typed, and no outage: {@link #denied}.)
     */
    private static boolean transientReply(JedisDataException e) {
        String message = String.valueOf(e.getMessage());
        for (String prefix : TRANSIENT_REPLIES) {
            if (message.startsWith(prefix)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether a connection failure was a timeout: a read's is the cause of Jedis's exception, a
     * connect's a suppressed exception of its "Failed to connect" (one per address tried), and a
     * cluster client's failure carries the node's further down; so causes and suppressed
     * exceptions are followed, to a bounded depth.
     */
    static boolean timedOut(Throwable e) {
        return timedOut(e, 8);
    }

    private static boolean timedOut(Throwable e, int depth) {
        if (e == null || depth == 0) {
            return false;
        }
        if (e instanceof SocketTimeoutException || timedOut(e.getCause(), depth - 1)) {
            return true;
        }
        for (Throwable suppressed : e.getSuppressed()) {
            if (timedOut(suppressed, depth - 1)) {
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
