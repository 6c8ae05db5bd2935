package io.idemkey.store.redis;

import io.idemkey.spi.AcquireResult;
import io.idemkey.spi.Lease;
import io.idemkey.spi.StoreUnavailableException;
import io.idemkey.testing.RedisCluster;
import io.idemkey.testing.RedisServer;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.util.JedisClusterCRC16;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

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

    private static RedisStoreOptions options(RedisCluster cluster, Duration timeout) {
        return RedisStoreOptions.fromUrl("redis://ignored", null, null).cluster(cluster.seeds())
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
     * During a scale-out a slot moves to a master just added, which the client has never heard of
     * (it served no slot when the client asked), and the keys already moved answer ASK naming it.
     * A completion with {@code WAIT} of such a key follows the ASK there (the client makes a pool
     * for the new master), as renewals and the client's own commands do; after the slot moved,
     * a completion follows the MOVED.
     */
    @Test
    void aCompletionWithWaitFollowsAnAskToAMasterTheClientNeverHeardOf() {
        try (RedisCluster cluster = RedisCluster.start(3);
             RedisIdempotencyStore store = RedisIdempotencyStore.open(options(cluster, Duration.ofSeconds(2))
                     .waitReplicas(1, Duration.ofMillis(100)))) {
            RedisServer source = cluster.masters().get(0);
            int slot = slot(keysOn(cluster, source, "scale-out", 1).get(0));
            List<String> keys = new ArrayList<>();
            for (int i = 0; keys.size() < 6; i++) {
                String key = namespace + "scale-out-slot-" + i;
                if (slot(key) == slot) {
                    keys.add(key);
                }
            }
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
            assertArrayEquals(renewed, store.renew(leases), "renewals follow the ASK to the new master");
            migration.finish();
            assertTrue(store.complete(moved.get(1), "owner", RESPONSE, DAY), "and the MOVED once the slot is there");
            for (String key : List.of(moved.get(0), moved.get(1))) {
                assertInstanceOf(AcquireResult.Completed.class, store.acquire(key, FINGERPRINT, "again", LOCK), key);
            }
            assertEquals(added, cluster.masterOf(slot));
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
