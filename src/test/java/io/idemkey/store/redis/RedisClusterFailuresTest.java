package io.idemkey.store.redis;

import io.idemkey.spi.AcquireResult;
import io.idemkey.spi.Lease;
import io.idemkey.spi.Renewal;
import io.idemkey.spi.StoreUnavailableException;
import io.idemkey.testing.RedisCluster;
import io.idemkey.testing.RedisServer;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.util.JedisClusterCRC16;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static io.idemkey.testing.Renewals.extended;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a Redis Cluster's failures do to the store: a master that stops answering without a TCP
 * reset (frozen: what a dead host or a partition looks like to its clients). Each test has a
 * cluster of its own (3 masters, 3 replicas, on loopback), since each changes it.
 */
class RedisClusterFailuresTest {

    private static final byte[] FINGERPRINT = new byte[16];
    private static final byte[] RESPONSE = "{\"paid\":true}".getBytes(StandardCharsets.UTF_8);
    private static final Duration LOCK = Duration.ofMinutes(5);
    private static final Duration DAY = Duration.ofHours(24);
    /** Long enough that no replica takes over while a test keeps a master frozen. */
    private static final Duration NO_FAILOVER = Duration.ofSeconds(60);

    private final String namespace = "failures:" + UUID.randomUUID() + ":";

    /** Whether the stores send the calls ready together as one pipeline: the class runs on both paths, through a subclass. */
    protected boolean coalesce() {
        return false;
    }

    private RedisStoreOptions options(RedisCluster cluster, Duration timeout) {
        return RedisStoreOptions.fromUrl("redis://ignored", null, null).cluster(cluster.seeds()).coalesce(coalesce())
                .connectTimeout(timeout).readTimeout(timeout);
    }

    private static int slot(String key) {
        return JedisClusterCRC16.getSlot(key);
    }

    /** Leases on {@code count} fresh keys, spread over every master. */
    private List<Lease> acquiredLeases(RedisIdempotencyStore store, String name, int count) {
        List<Lease> leases = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String key = namespace + name + "-" + i;
            assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key, FINGERPRINT, "owner", LOCK));
            leases.add(new Lease(key, "owner", LOCK));
        }
        return leases;
    }

    private static long scriptsOn(RedisServer master) {
        return master.commandCalls().getOrDefault("evalsha", 0L);
    }

    /** {@code count} fresh keys of this test's whose slots {@code master} serves. */
    private List<String> keysOn(RedisCluster cluster, RedisServer master, String name, int count) {
        List<String> keys = new ArrayList<>();
        for (int i = 0; keys.size() < count; i++) {
            String key = namespace + name + "-" + i;
            if (cluster.masterOf(slot(key)) == master) {
                keys.add(key);
            }
        }
        return keys;
    }

    /**
     * A master that vanishes without a TCP reset (its host dies, a partition): what its clients
     * sent is never answered and new connections are not accepted. Its replica takes over within
     * seconds, and the store follows on every path, an acquire, a completion with {@code WAIT} and
     * renewals (three stores, each with one kind of call only), within seconds too; every call
     * meanwhile is an outage within its timeouts. Jedis alone never asks for the slots again here:
     * its retry deadline is the read timeout, so each call fails once and ends. The periodic
     * refresh is kept out of the way (an hour) to show the refresh the failed calls ask for.
     */
    @Test
    void aMasterThatVanishesIsReplacedByItsReplicaOnEveryPathWithinSeconds() throws Exception {
        Duration timeout = Duration.ofSeconds(1);
        try (RedisCluster cluster = RedisCluster.start(3);
             RedisIdempotencyStore acquiring = RedisIdempotencyStore.open(options(cluster, timeout)
                     .topologyRefreshPeriod(Duration.ofHours(1)));
             RedisIdempotencyStore completing = RedisIdempotencyStore.open(options(cluster, timeout)
                     .topologyRefreshPeriod(Duration.ofHours(1)).waitReplicas(1, Duration.ofMillis(100)));
             RedisIdempotencyStore renewing = RedisIdempotencyStore.open(options(cluster, timeout)
                     .topologyRefreshPeriod(Duration.ofHours(1)))) {
            RedisServer victim = cluster.masters().get(0);
            List<String> keys = keysOn(cluster, victim, "vanished", 3);
            String completed = keys.get(0);
            String toComplete = keys.get(1);
            Lease lease = new Lease(keys.get(2), "owner", LOCK);
            for (String key : keys) {
                assertInstanceOf(AcquireResult.Acquired.class, acquiring.acquire(key, FINGERPRINT, "owner", LOCK));
            }
            assertTrue(acquiring.complete(completed, "owner", RESPONSE, DAY));
            assertEquals(Renewal.RENEWED, renewing.renew(List.of(lease))[0]);
            cluster.awaitReplicasCaughtUp();
            List<RedisServer> replicas = cluster.replicasOf(victim);

            victim.vanish();
            long vanishedAt = System.nanoTime();
            List<Path> paths = List.of(
                    new Path("acquire", () -> acquiring.acquire(completed, FINGERPRINT, "retry", LOCK)
                            instanceof AcquireResult.Completed c && Arrays.equals(RESPONSE, c.response())),
                    new Path("completion with WAIT", () -> completing.complete(toComplete, "owner", RESPONSE, DAY)),
                    new Path("renewals", () -> renewing.renew(List.of(lease))[0] == Renewal.RENEWED));
            paths.forEach(Path::start);
            RedisServer promoted = cluster.awaitFailover(replicas);
            long promotedAt = System.nanoTime();
            for (Path path : paths) {
                path.awaitServed(Duration.ofSeconds(30));
            }

            for (Path path : paths) {
                assertEquals(Map.of(), path.otherFailures, path.name + ": only outages while there was no master");
                assertTrue(path.slowestMillis.get() < 3 * timeout.toMillis() + 1_000,
                        path.name + ": slowest call " + path.slowestMillis.get() + " ms, no hang");
                long afterPromotion = TimeUnit.NANOSECONDS.toMillis(path.servedAt.get() - promotedAt);
                assertTrue(afterPromotion < 15_000, path.name + " served by the promoted replica "
                        + afterPromotion + " ms after it took over");
            }
            assertEquals(promoted, cluster.masterOf(slot(completed)));
            System.out.printf("master vanished: replica promoted after %d ms; served again after the promotion: %s%n",
                    TimeUnit.NANOSECONDS.toMillis(promotedAt - vanishedAt), paths.stream().map(path -> path.name + " "
                            + TimeUnit.NANOSECONDS.toMillis(path.servedAt.get() - promotedAt) + " ms (" + path.outages.get()
                            + " outages, slowest call " + path.slowestMillis.get() + " ms)").toList());
        }
    }

    /**
     * A failover that no call noticed (nothing asked for the failed master's slots meanwhile) is
     * followed by the periodic refresh: the first call for those slots afterwards is served, not an
     * outage.
     */
    @Test
    void aFailoverNoCallNoticedIsFollowedByThePeriodicRefresh() throws Exception {
        Duration timeout = Duration.ofSeconds(1);
        Duration period = Duration.ofSeconds(1);
        try (RedisCluster cluster = RedisCluster.start(3);
             RedisIdempotencyStore store = RedisIdempotencyStore.open(options(cluster, timeout).topologyRefreshPeriod(period))) {
            RedisServer victim = cluster.masters().get(0);
            String completed = keysOn(cluster, victim, "unnoticed", 1).get(0);
            assertInstanceOf(AcquireResult.Acquired.class, store.acquire(completed, FINGERPRINT, "owner", LOCK));
            assertTrue(store.complete(completed, "owner", RESPONSE, DAY));
            cluster.awaitReplicasCaughtUp();

            cluster.vanishAndAwaitFailover(victim);
            awaitSlotQueries(cluster, victim, 2);

            AcquireResult first = store.acquire(completed, FINGERPRINT, "retry", LOCK);
            assertInstanceOf(AcquireResult.Completed.class, first, "the first call after the failover is served");
        }
    }

    /**
     * Waits until the live nodes have answered {@code count} more slot queries (a topology refresh
     * asks one node, after the vanished one's timeout if it asks that first): refreshes run one at
     * a time, so after two, one that began after this call has applied its answer.
     */
    private static void awaitSlotQueries(RedisCluster cluster, RedisServer vanished, int count) {
        List<RedisServer> live = cluster.nodes().stream().filter(node -> node != vanished).toList();
        long before = slotQueries(live);
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
                .until(() -> slotQueries(live) >= before + count);
    }

    private static long slotQueries(List<RedisServer> nodes) {
        long queries = 0;
        for (RedisServer node : nodes) {
            for (Map.Entry<String, Long> calls : node.commandCalls().entrySet()) {
                if (calls.getKey().equals("cluster|slots") || calls.getKey().equals("cluster|shards")) {
                    queries += calls.getValue();
                }
            }
        }
        return queries;
    }

    /**
     * During a scale-out a slot moves to a master just added, which the client has never heard of
     * (it served no slot when the client asked), and the keys already moved answer ASK naming it.
     * A completion with {@code WAIT} of such a key follows the ASK there (the client makes a pool
     * for the new master), as renewals and the client's own commands do, and so do acquires (their
     * {@code SET} and {@code PTTL}, each after {@code ASKING}): a moved key's record is found there,
     * a new key of the slot is made there, a key not moved yet is still the source's. After the slot
     * moved, a completion follows the MOVED.
     */
    @Test
    void aCompletionWithWaitFollowsAnAskToAMasterTheClientNeverHeardOf() {
        try (RedisCluster cluster = RedisCluster.start(3);
             RedisIdempotencyStore store = RedisIdempotencyStore.open(options(cluster, Duration.ofSeconds(2))
                     .waitReplicas(1, Duration.ofMillis(100)))) {
            RedisServer source = cluster.masters().get(0);
            int slot = slot(keysOn(cluster, source, "scale-out", 1).get(0));
            List<String> keys = new ArrayList<>();
            for (int i = 0; keys.size() < 7; i++) {
                String key = namespace + "scale-out-slot-" + i;
                if (slot(key) == slot) {
                    keys.add(key);
                }
            }
            String fresh = keys.remove(6); // acquired only during the migration
            List<Lease> leases = new ArrayList<>();
            for (String key : keys) {
                assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key, FINGERPRINT, "owner", LOCK));
                leases.add(new Lease(key, "owner", LOCK));
            }

            RedisServer added = cluster.addMaster();
            RedisCluster.Migration migration = cluster.beginMigration(slot, added);
            assertEquals(3, migration.moveKeys(3));
            List<String> moved = new ArrayList<>();
            try (var onAdded = added.client()) {
                for (String key : keys) {
                    onAdded.asking(); // the slot is still the source's: the new master answers for a key it imports only after ASKING
                    if (onAdded.exists(key)) {
                        moved.add(key);
                    }
                }
            }
            assertEquals(3, moved.size());
            // first: a redirected renewal runs as a command of its own, whose redirection Jedis follows, and which makes the client know the node
            assertTrue(store.complete(moved.get(0), "owner", RESPONSE, DAY), "a completion with WAIT follows the ASK to the new master");
            boolean[] renewed = new boolean[keys.size()];
            for (int i = 0; i < renewed.length; i++) {
                renewed[i] = !keys.get(i).equals(moved.get(0)); // the completed key's lease is over
            }
            assertArrayEquals(renewed, extended(store.renew(leases)), "renewals follow the ASK to the new master");
            assertInstanceOf(AcquireResult.InProgress.class, store.acquire(moved.get(2), FINGERPRINT, "other", LOCK),
                    "an acquire follows the ASK to a moved key's record");
            String notMoved = keys.stream().filter(key -> !moved.contains(key)).findFirst().orElseThrow();
            assertInstanceOf(AcquireResult.InProgress.class, store.acquire(notMoved, FINGERPRINT, "other", LOCK),
                    "a key not moved yet is the source's");
            assertInstanceOf(AcquireResult.Acquired.class, store.acquire(fresh, FINGERPRINT, "owner", LOCK),
                    "a new key of a migrating slot is made on the new master");
            try (var onAdded = added.client()) {
                onAdded.asking();
                assertTrue(onAdded.exists(fresh), "the new key is on the new master");
            }
            migration.finish();
            assertTrue(store.complete(moved.get(1), "owner", RESPONSE, DAY), "and the MOVED once the slot is there");
            for (String key : List.of(moved.get(0), moved.get(1))) {
                assertInstanceOf(AcquireResult.Completed.class, store.acquire(key, FINGERPRINT, "again", LOCK), key);
            }
            assertEquals(added, cluster.masterOf(slot));
        }
    }

    /** Calls of one kind, made again and again on a thread of their own until one is served. */
    private static final class Path {
        final String name;
        final java.util.function.BooleanSupplier call;
        final AtomicLong servedAt = new AtomicLong();
        final AtomicLong slowestMillis = new AtomicLong();
        final AtomicLong outages = new AtomicLong();
        final Map<String, Long> otherFailures = new ConcurrentHashMap<>();
        final CompletableFuture<Void> served = new CompletableFuture<>();

        Path(String name, java.util.function.BooleanSupplier call) {
            this.name = name;
            this.call = call;
        }

        void start() {
            Thread thread = new Thread(() -> {
                while (!served.isDone()) {
                    long start = System.nanoTime();
                    try {
                        if (call.getAsBoolean()) {
                            servedAt.set(System.nanoTime());
                            served.complete(null);
                        } else {
                            otherFailures.merge("answered false", 1L, Long::sum);
                        }
                    } catch (StoreUnavailableException e) {
                        outages.incrementAndGet();
                    } catch (RuntimeException e) {
                        otherFailures.merge(e + (e.getCause() == null ? "" : ", caused by " + e.getCause()), 1L, Long::sum);
                    }
                    slowestMillis.accumulateAndGet(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), Math::max);
                }
            }, "path-" + name);
            thread.setDaemon(true);
            thread.start();
        }

        void awaitServed(Duration limit) throws Exception {
            try {
                served.get(limit.toMillis(), TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.TimeoutException e) {
                served.cancel(false); // the thread stops after its current call
                throw new AssertionError(name + " not served within " + limit.toSeconds() + " s: " + outages.get()
                        + " outages, other failures " + otherFailures);
            }
        }
    }

    /**
     * A pipelined call (a completion with {@code WAIT}, a renewal batch) whose master stops
     * answering ends in a read timeout, which must count as a timeout: the call may have run, and
     * is not sent again (a completion with {@code WAIT} must not be; a renewal batch sent again
     * would wait as long again, on every master). The masters that answer get each renewal once.
     */
    @Test
    void aCompletionWithWaitAndARenewalBatchWhoseMasterStopsAnsweringAreSentOnce() {
        try (RedisCluster cluster = RedisCluster.start(3, NO_FAILOVER);
             RedisIdempotencyStore store = RedisIdempotencyStore.open(options(cluster, Duration.ofMillis(500))
                     .waitReplicas(1, Duration.ofMillis(100)))) {
            List<Lease> leases = acquiredLeases(store, "sent-once", 30);
            String completed = leases.get(0).recordKey();
            RedisServer silent = cluster.masterOf(slot(completed));
            List<RedisServer> answering = cluster.masters().stream().filter(m -> m != silent).toList();
            Map<RedisServer, Long> leasesOn = new java.util.HashMap<>();
            leases.forEach(lease -> leasesOn.merge(cluster.masterOf(slot(lease.recordKey())), 1L, Long::sum));
            cluster.masters().forEach(RedisServer::resetStats);

            silent.freeze();
            try {
                assertThrows(StoreUnavailableException.class, () -> store.complete(completed, "owner", RESPONSE, DAY));
                assertThrows(StoreUnavailableException.class, () -> store.renew(leases));
            } finally {
                silent.resume();
            }

            for (RedisServer master : answering) {
                assertEquals(leasesOn.get(master), scriptsOn(master), "each renewal reached a master that answers once");
            }
            // what reached the frozen master it runs once resumed (before answering this INFO)
            Map<String, Long> ranThere = silent.commandCalls();
            assertEquals(1L, ranThere.getOrDefault("wait", 0L), "the completion with WAIT was sent once: " + ranThere);
            assertEquals(1L + leasesOn.get(silent), ranThere.getOrDefault("evalsha", 0L),
                    "the completion and each renewal of its keys were sent once: " + ranThere);
        }
    }

    /**
     * An interrupt of the thread that renews leases across several masters (an application
     * stopping its executor) is kept for that thread to see, and never makes the store send the
     * whole batch again. The store reads each master's replies on the calling thread.
     */
    @Test
    void anInterruptDuringRenewalsAcrossMastersIsKeptAndTheBatchIsNotSentAgain() throws Exception {
        try (RedisCluster cluster = RedisCluster.start(3, NO_FAILOVER);
             RedisIdempotencyStore store = RedisIdempotencyStore.open(options(cluster, Duration.ofSeconds(1)))) {
            List<Lease> leases = acquiredLeases(store, "interrupted", 30);
            RedisServer silent = cluster.masterOf(slot(leases.get(0).recordKey()));
            List<RedisServer> answering = cluster.masters().stream().filter(m -> m != silent).toList();
            Map<RedisServer, Long> leasesOn = new java.util.HashMap<>();
            leases.forEach(lease -> leasesOn.merge(cluster.masterOf(slot(lease.recordKey())), 1L, Long::sum));
            cluster.masters().forEach(RedisServer::resetStats);

            CompletableFuture<String> outcome = new CompletableFuture<>();
            AtomicBoolean interruptKept = new AtomicBoolean();
            Thread renewing = new Thread(() -> {
                String result;
                try {
                    store.renew(leases);
                    result = "renewed";
                } catch (RuntimeException e) {
                    result = e.getClass().getSimpleName();
                }
                interruptKept.set(Thread.currentThread().isInterrupted());
                outcome.complete(result);
            }, "renewing");
            silent.freeze();
            try {
                renewing.start();
                Thread.sleep(300); // waiting for the frozen master's replies (the read timeout is 1 s)
                renewing.interrupt();
                assertEquals("StoreUnavailableException", outcome.get(10, TimeUnit.SECONDS),
                        "the frozen master's renewals are an outage");
            } finally {
                silent.resume();
            }

            assertTrue(interruptKept.get(), "the interrupt is the caller's to see, not swallowed");
            for (RedisServer master : answering) {
                assertEquals(leasesOn.get(master), scriptsOn(master), "each renewal reached a master that answers once");
            }
        }
    }
}
