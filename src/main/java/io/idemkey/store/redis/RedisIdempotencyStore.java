package io.idemkey.store.redis;

import io.idemkey.spi.AcquireResult;
import io.idemkey.spi.IdempotencyStore;
import io.idemkey.spi.Lease;
import io.idemkey.spi.RateLimit;
import io.idemkey.spi.Renewal;
import io.idemkey.spi.StoreAccessDeniedException;
import io.idemkey.spi.StoreInspection;
import io.idemkey.spi.StoreUnavailableException;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisDataException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Function;
import java.util.function.Supplier;

import static io.idemkey.store.redis.RecordLayout.ACQUIRE;
import static io.idemkey.store.redis.RecordLayout.COMPLETE;
import static io.idemkey.store.redis.RecordLayout.RELEASE;
import static io.idemkey.store.redis.RecordLayout.RENEW;
import static io.idemkey.store.redis.RecordLayout.applied;
import static io.idemkey.store.redis.RecordLayout.bytes;
import static io.idemkey.store.redis.RecordLayout.millis;

/**
 * The {@link IdempotencyStore} on Redis, through a Jedis client: one server ({@link RedisClient}), a
 * master found through Sentinel, or a Redis Cluster ({@link RedisStoreOptions.Mode}). Every
 * operation is one round trip running one Lua script ({@code record.lua} next to this class), so
 * acquire cannot race, and complete, release and renew are compare-and-set on the owner token;
 * except an acquire without a rate limit, which is two plain commands in one round trip, whose
 * decision is as atomic and which cost Redis less than the script
 * ({@link #acquire(String, byte[], String, Duration)}; a Redis before 7.0 gets the script), and a
 * completion told the fingerprint where Redis has {@code SET ... IFEQ} (Valkey from 8.1, Redis from
 * 8.4), which is that one command, and the script only where it wrote nothing
 * ({@link #complete(String, String, byte[], byte[], Duration)}; {@link ServerCapabilities}). A
 * record is one compact string that Redis expires itself ({@code PX}); with a rate limit, a key's
 * request counter lives beside it, under a key that starts with the record's, in the same cluster
 * slot, for its window ({@link RecordLayout}). Each script touches only the keys it is given, so in
 * a cluster it runs on the record's slot's master; a node that never saw the script answers
 * {@code NOSCRIPT} and gets its text once. Nothing else of Idemkey's lives in Redis, but for the
 * seconds {@link #checkPermissions} takes. A user limited by a Redis ACL needs {@link #aclRule}:
 * Redis's refusal ({@code NOPERM}, {@code WRONGPASS}, {@code NOAUTH}) is a
 * {@link StoreAccessDeniedException}, never an outage ({@link RedisFailures}).
 *
 * <p>A command that fails on a broken pooled connection is retried once on a fresh one; one that
 * timed out is not ({@link RedisCommands}). Sentinel and cluster clients find their topology when
 * the store opens; if no node answers then, the store keeps trying on each call (the servers start
 * without Redis, as with one server), until it is closed. A cluster client asks the nodes for the
 * slots again soon after a call got no answer, and periodically ({@link ClusterMasters}).
 *
 * <p>With {@link RedisStoreOptions#coalesce(boolean)}, acquire, complete, release and renew calls
 * that are ready at the same moment, from any requests, travel together: one pipeline per master,
 * one write and one read ({@link CoalescedCalls}); one caller alone never waits, and once calls
 * arrive together a batch waits {@link RedisStoreOptions#coalesceLinger(Duration)} for more. Each
 * keeps its own reply, classification and retry as above: a broken connection fails exactly the
 * calls it carried, each of which is then sent again once, on a fresh connection, in whatever
 * batch it meets. A completion that waits for replicas ({@code wait-replicas}: {@link ReplicaWait})
 * and the renewals of many leases (one pipeline already) are sent as without it: a {@code WAIT}
 * holds up every reply after it on its connection, so it would hold up every call in its batch.
 */
public final class RedisIdempotencyStore implements IdempotencyStore, StoreInspection {

    /** The record script (for tests). */
    static final RedisScript RECORD = RecordLayout.SCRIPT;
    /** What a Redis ACL user of Idemkey's may do, after its key pattern ({@link #aclRule}; {@link RedisAcl#COMMANDS}). */
    public static final String ACL_COMMANDS = RedisAcl.COMMANDS;

    private final String description;
    private final RedisCommands commands;
    private final ServerCapabilities capabilities;
    private final ReplicaWait replicas;
    private final RecordInspection inspection;

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
        this.description = description;
        this.commands = new RedisCommands(connect, afterClose, description, new RedisFailures(description), coalesced);
        this.capabilities = new ServerCapabilities(description);
        this.replicas = new ReplicaWait(waitReplicas, waitTimeout);
        this.inspection = new RecordInspection(commands);
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
            store.commands.connected();
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
     * between. They cost Redis less than the script (docs/performance.md, "An acquire without a
     * script"). The script's "the same token again" branch (an acquire sent again after its reply
     * was lost finds its own record) is a renewal here: the lease is whole again, as the script
     * makes it, or, lost meanwhile, the key is acquired anew. A Redis before 7.0, which refuses
     * {@code GET} beside {@code NX}, gets the script from its first refusal on.
     */
    @Override
    public AcquireResult acquire(String recordKey, byte[] fingerprint, String ownerToken, Duration lockTtl) {
        RecordLayout.checkSizes(fingerprint, ownerToken);
        if (!capabilities.setGet()) {
            return scriptAcquire(recordKey, fingerprint, bytes(ownerToken), millis(lockTtl));
        }
        byte[] key = bytes(recordKey);
        byte[] token = bytes(ownerToken);
        byte[] record = RecordLayout.inProgressRecord(fingerprint, token);
        byte[] ttl = millis(lockTtl);
        Function<Boolean, CoalescedCalls.Request> setThenPttl = PlainCommands.setThenPttl(key, record, ttl);
        for (int attempt = 1; ; attempt++) {
            List<?> replies;
            try {
                replies = (List<?>) commands.execute(
                        client -> PlainCommands.unlessWriteRefused(() -> commands.batchedOnMaster(key, setThenPttl)));
            } catch (JedisDataException e) {
                if (!capabilities.refusesSetGet(e)) {
                    throw e;
                }
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
            AcquireResult existing = RecordLayout.found(recordKey, found, fingerprint, token, (Long) replies.get(1));
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

    /** The record script's acquire, without a rate limit: for a Redis that refuses the plain commands. */
    private AcquireResult scriptAcquire(String recordKey, byte[] fingerprint, byte[] token, byte[] ttl) {
        return RecordLayout.acquired((List<?>) commands.script(recordKey, ACQUIRE, fingerprint, token, ttl));
    }

    @Override
    public AcquireResult acquire(String recordKey, byte[] fingerprint, String ownerToken, Duration lockTtl,
                                 RateLimit limit) {
        RecordLayout.checkSizes(fingerprint, ownerToken);
        return RecordLayout.acquired((List<?>) commands.script(List.of(bytes(recordKey), bytes(counterKey(recordKey))),
                ACQUIRE, fingerprint, bytes(ownerToken), millis(lockTtl), bytes(Integer.toString(limit.permits())),
                millis(limit.window())));
    }

    /** The request counter of a record key ({@link RecordLayout#counterKey}). */
    static String counterKey(String recordKey) {
        return RecordLayout.counterKey(recordKey);
    }

    @Override
    public boolean countsRequests() {
        return true;
    }

    /**
     * The completion script; with {@code wait-replicas}, followed in the same round trip by
     * {@code WAIT} on the same connection ({@link ReplicaWait}). A completion retried after its
     * reply was lost finds itself made by the same owner and writes the record again as it is, so
     * that its {@code WAIT} also covers the first write: from Redis 7.2 on, a connection that wrote
     * nothing has nothing to wait for, and its {@code WAIT} counts every replica at once (up to
     * 7.0, any command before it would do).
     */
    @Override
    public boolean complete(String recordKey, String ownerToken, byte[] response, Duration ttl) {
        if (!replicas.wanted()) {
            return applied(commands.script(recordKey, COMPLETE, bytes(ownerToken), response, millis(ttl)));
        }
        List<?> replies = replicas.completion(commands, List.of(bytes(recordKey)),
                List.of(COMPLETE, bytes(ownerToken), response, millis(ttl)));
        boolean applied = applied(replies.get(0));
        if (applied) {
            replicas.check(recordKey, (Long) replies.get(1));
        }
        return applied;
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
        if (capabilities.setIfeq() && RecordLayout.fits(fingerprint, token)
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
        byte[] expected = RecordLayout.inProgressRecord(fingerprint, token);
        byte[] completed = RecordLayout.completedRecord(fingerprint, token, response);
        byte[] px = millis(ttl);
        Function<Boolean, CoalescedCalls.Request> setIfeq = PlainCommands.setIfEqual(key, completed, expected, px, replicas);
        List<?> replies;
        try {
            // a completion that waits for replicas keeps a connection of its own (what its WAIT covers)
            replies = (List<?>) commands.execute(client -> PlainCommands.unlessWriteRefused(() -> replicas.wanted()
                    ? commands.onMaster(key, setIfeq) : commands.batchedOnMaster(key, setIfeq)));
        } catch (JedisDataException e) {
            // an error reply wrote nothing: the script decides, for this call, or from now on where
            // the server has no IFEQ
            capabilities.ifeqAnswered(e);
            return false;
        }
        if (replies == null || replies.get(0) == null) {
            // refused for now (out of memory, too few replicas: the script writes nothing where it need not),
            // or not this owner's record in progress (its lease lost, or its own completion sent again,
            // whose WAIT, if any, waited for this connection's earlier writes): the script tells
            return false;
        }
        if (replicas.wanted()) {
            replicas.check(recordKey, (Long) replies.get(1));
        }
        return true;
    }

    /** Runs {@code action} for each completion fewer than {@code wait-replicas} replicas acknowledged in time (to count it). */
    public void whenNotReplicated(Runnable action) {
        replicas.whenNotReplicated(action);
    }

    /** Completions that fewer than {@code wait-replicas} replicas acknowledged in time, since the store opened. */
    public long completionsNotReplicated() {
        return replicas.notReplicated();
    }

    @Override
    public boolean release(String recordKey, String ownerToken) {
        return applied(commands.script(recordKey, RELEASE, bytes(ownerToken)));
    }

    @Override
    public Renewal renew(String recordKey, String ownerToken, Duration lockTtl) {
        return RecordLayout.renewal(commands.script(recordKey, RENEW, bytes(ownerToken), millis(lockTtl)));
    }

    /**
     * The leases' renewals pipelined: one round trip for all of them (in a cluster, one per master
     * that holds some of them), each still its own script call on its own record
     * ({@link RedisCommands#pipelined}).
     */
    @Override
    public Renewal[] renew(List<Lease> leases) {
        List<byte[]> keys = new ArrayList<>(leases.size());
        List<List<byte[]>> arguments = new ArrayList<>(leases.size());
        for (Lease lease : leases) {
            keys.add(bytes(lease.recordKey()));
            arguments.add(List.of(RENEW, bytes(lease.ownerToken()), millis(lease.lockTtl())));
        }
        List<Object> replies = commands.pipelined(keys, arguments);
        Renewal[] renewed = new Renewal[leases.size()];
        for (int i = 0; i < renewed.length; i++) {
            renewed[i] = RecordLayout.renewal(replies.get(i));
        }
        return renewed;
    }

    @Override
    public Optional<StoredRecord> inspect(String recordKey) {
        return inspection.inspect(recordKey);
    }

    @Override
    public Purge purge(String recordKey, boolean force) {
        return inspection.purge(recordKey, force);
    }

    /** The records in progress under {@code keyPrefix}, page by page ({@link RecordInspection#inProgress}). */
    @Override
    public Page inProgress(String keyPrefix, String cursor, int limit) {
        return inspection.inProgress(keyPrefix, cursor, limit);
    }

    /**
     * Sends each command the store's calls may send, once, on a key of its own under
     * {@code keyPrefix}, so that a Redis user without one of them is found when the application
     * starts, not by each request ({@link RedisAcl#check}).
     *
     * @throws StoreAccessDeniedException naming what Redis refused, and the rule the user needs
     * @throws StoreUnavailableException if Redis does not answer now (the first refused call says what is missing)
     */
    public void checkPermissions(String keyPrefix, boolean rateLimited, boolean listed) {
        new RedisAcl(this, commands, description).check(keyPrefix, rateLimited, listed);
    }

    /**
     * The Redis ACL rule a user of Idemkey's needs whose records' keys start with {@code keyPrefix}:
     * the keys that start with it ({@code ~<prefix>*}: records, and the rate limit's counters, which
     * start with their record's key) and {@link #ACL_COMMANDS}.
     */
    public static String aclRule(String keyPrefix) {
        return RedisAcl.rule(keyPrefix);
    }

    @Override
    public boolean isAvailable() {
        try {
            return "PONG".equals(commands.execute(UnifiedJedis::ping));
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** The coalescing path's calls (null without it), for tests. */
    CoalescedCalls coalesced() {
        return commands.coalesced();
    }

    /**
     * Closes the client and stops the background work; from now on every call is an outage, and
     * no client is made any more ({@link RedisCommands#close()}).
     */
    @Override
    public void close() {
        commands.close();
    }

    @Override
    public String toString() {
        return "RedisIdempotencyStore[" + description + "]";
    }
}
