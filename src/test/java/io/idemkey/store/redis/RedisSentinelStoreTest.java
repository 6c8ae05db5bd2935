package io.idemkey.store.redis;

import io.idemkey.spi.AcquireResult;
import io.idemkey.spi.IdempotencyStore;
import io.idemkey.spi.Lease;
import io.idemkey.spi.Renewal;
import io.idemkey.spi.StoreUnavailableException;
import io.idemkey.testing.RedisSentinels;
import io.idemkey.testing.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The store contract through Sentinel (1 master, 2 replicas, 3 sentinels, on loopback), and a
 * failover under load: the store follows the promoted replica without being reopened, and while
 * there is no master every call fails as an outage within its timeouts, never as anything else.
 */
class RedisSentinelStoreTest extends RedisStoreContract {

    private static final Duration TIMEOUT = Duration.ofSeconds(1);

    private static RedisSentinels sentinels;

    @BeforeAll
    static void startSentinels() {
        sentinels = RedisSentinels.start();
    }

    @AfterAll
    static void stopSentinels() {
        sentinels.close();
    }

    @Override
    protected IdempotencyStore createStore() {
        return RedisIdempotencyStore.open(RedisStoreOptions.fromUrl("redis://ignored", null, null).coalesce(coalesce())
                .sentinel(RedisSentinels.MASTER_NAME, sentinels.sentinels()).connectTimeout(TIMEOUT).readTimeout(TIMEOUT));
    }


    @Test
    void afterTheMasterRestartsWithoutAFailoverTheNextCallSucceedsOnTheSameStore() throws Exception {
        fillPoolWithConnections(8); // all of them broken by the restart
        sentinels.master().restart(); // back on its port long before the sentinels would fail it over

        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key("after-restart"), FINGERPRINT, "owner-1", LONG_LOCK));
        assertTrue(store.complete(key("after-restart"), "owner-1", RESPONSE, DAY));
        assertTrue(store.isAvailable());
    }

    /**
     * A master that vanishes without a TCP reset (its host dies, a partition): what the store sent
     * it is never answered, and new connections are not accepted. The sentinels promote a replica
     * and announce it, Jedis's listeners switch the store's pool to it, and the store serves again
     * within seconds on every path (an acquire, a completion with {@code WAIT}, renewals); every
     * call meanwhile is an outage within its timeouts. (A group of its own: the class's is shared.)
     */
    @Test
    void whenTheMasterVanishesTheStoreFollowsThePromotedReplicaWithinSeconds() throws Exception {
        try (RedisSentinels group = RedisSentinels.start();
             RedisIdempotencyStore vanishing = RedisIdempotencyStore.open(RedisStoreOptions.fromUrl("redis://ignored", null, null).coalesce(coalesce())
                     .sentinel(RedisSentinels.MASTER_NAME, group.sentinels()).connectTimeout(TIMEOUT).readTimeout(TIMEOUT)
                     .waitReplicas(1, Duration.ofMillis(500)))) {
            String completed = key("before-vanish");
            String toComplete = key("to-complete");
            String leased = key("leased");
            assertInstanceOf(AcquireResult.Acquired.class, vanishing.acquire(completed, FINGERPRINT, "owner-1", LONG_LOCK));
            assertTrue(vanishing.complete(completed, "owner-1", RESPONSE, DAY));
            assertInstanceOf(AcquireResult.Acquired.class, vanishing.acquire(toComplete, FINGERPRINT, "owner-1", LONG_LOCK));
            assertInstanceOf(AcquireResult.Acquired.class, vanishing.acquire(leased, FINGERPRINT, "owner-1", LONG_LOCK));
            RedisServer oldMaster = group.master();
            oldMaster.awaitReplicated(group.replicas());

            AcquireLoad load = AcquireLoad.start(vanishing, 2, n -> key("during-vanish-" + n));
            long vanishedAt = System.nanoTime();
            RedisServer newMaster = group.vanishMasterAndAwaitFailover();
            long promotedAt = System.nanoTime();
            await().atMost(Duration.ofSeconds(15)).ignoreExceptionsInstanceOf(StoreUnavailableException.class)
                    .until(() -> vanishing.acquire(completed, FINGERPRINT, "owner-2", LONG_LOCK) instanceof AcquireResult.Completed);
            long servedAt = System.nanoTime();
            Map<String, Long> outcomes = load.stop();

            assertTrue(AcquireLoad.onlyAcquiredOrUnavailable(outcomes), "only acquisitions and outages: " + outcomes);
            assertTrue(load.slowestCallMillis() < 3 * TIMEOUT.toMillis() + 1_000, "slowest call " + load.slowestCallMillis() + " ms: no hang");
            assertTrue(newMaster != oldMaster);
            assertTrue(vanishing.complete(toComplete, "owner-1", RESPONSE, DAY), "a completion with WAIT on the new master");
            assertEquals(Renewal.RENEWED, vanishing.renew(List.of(new Lease(leased, "owner-1", LONG_LOCK)))[0], "renewals on the new master");
            System.out.printf("master vanished: promoted after %d ms, served %d ms after that; %s, slowest call %d ms%n",
                    TimeUnit.NANOSECONDS.toMillis(promotedAt - vanishedAt), TimeUnit.NANOSECONDS.toMillis(servedAt - promotedAt),
                    outcomes, load.slowestCallMillis());
        }
    }

    /**
     * A store closed before any sentinel ever answered (an application undeployed while Redis was
     * out of reach) makes no client afterwards, when the sentinels answer again: its calls are
     * outages, and it starts no listener threads and no pool that nobody would close. (A group of
     * its own, whose sentinels this test freezes.)
     */
    @Test
    void aStoreClosedBeforeItEverConnectedMakesNoClientLater() {
        try (RedisSentinels group = RedisSentinels.start()) {
            RedisStoreOptions options = RedisStoreOptions.fromUrl("redis://ignored", null, null).coalesce(coalesce())
                    .sentinel(RedisSentinels.MASTER_NAME, group.sentinels())
                    .connectTimeout(Duration.ofMillis(300)).readTimeout(Duration.ofMillis(300));
            RedisIdempotencyStore closedEarly;
            group.freezeSentinels();
            try {
                closedEarly = RedisIdempotencyStore.open(options); // no sentinel answers: not connected yet
            } finally {
                group.resumeSentinels();
            }
            closedEarly.close(); // the application is undeployed

            long listenersBefore = sentinelListeners();
            String outcome;
            try {
                outcome = closedEarly.acquire(key("after-close"), FINGERPRINT, "owner-1", LONG_LOCK).toString();
            } catch (StoreUnavailableException e) {
                outcome = "unavailable";
            }
            assertEquals(listenersBefore, sentinelListeners(), "listener threads started for a closed store (its call: "
                    + outcome + ")");
            assertEquals("unavailable", outcome, "a closed store's call is an outage");
        }
    }

    /** The Sentinel listener threads of every Jedis client in this JVM. */
    private static long sentinelListeners() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(thread -> thread.isAlive() && thread.getName().contains("-SentinelListener-")).count();
    }

    @Test
    void whenTheMasterDiesTheStoreFollowsThePromotedReplicaAndMeanwhileCallsFailAsAnOutageInTime() throws Exception {
        assertTrue(store.isAvailable(), "the readiness check's PING");
        List<String> completed = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            String key = key("before-failover-" + i);
            assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key, FINGERPRINT, "owner-1", LONG_LOCK));
            assertTrue(store.complete(key, "owner-1", RESPONSE, DAY));
            completed.add(key);
        }
        RedisServer oldMaster = sentinels.master();
        oldMaster.awaitReplicated(sentinels.replicas());

        AcquireLoad load = AcquireLoad.start(store, 4, n -> key("during-" + n));
        RedisServer newMaster = sentinels.killMasterAndAwaitFailover();
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            try {
                return store.acquire(key("after-" + System.nanoTime()), FINGERPRINT, "o", LONG_LOCK)
                        instanceof AcquireResult.Acquired;
            } catch (StoreUnavailableException e) {
                return false;
            }
        });
        Map<String, Long> outcomes = load.stop();

        assertTrue(AcquireLoad.onlyAcquiredOrUnavailable(outcomes), "only acquisitions and outages: " + outcomes);
        assertTrue(outcomes.getOrDefault("unavailable", 0L) > 0, "the callers saw the outage: " + outcomes);
        assertTrue(load.slowestCallMillis() < 5_000, "slowest call " + load.slowestCallMillis() + " ms: no hang");
        assertTrue(newMaster != oldMaster && !oldMaster.isRunning());
        assertTrue(store.isAvailable());
        for (String key : completed) {
            assertInstanceOf(AcquireResult.Completed.class, store.acquire(key, FINGERPRINT, "owner-2", LONG_LOCK),
                    "replicated before the kill, so replayed by the new master");
        }
        System.out.printf("failover under load: %s, slowest call %d ms%n", outcomes, load.slowestCallMillis());
    }
}
