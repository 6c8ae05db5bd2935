package io.idemkey.store.redis;

import io.idemkey.spi.AcquireResult;
import io.idemkey.spi.IdempotencyStore;
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

import static org.awaitility.Awaitility.await;
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
        return RedisIdempotencyStore.open(RedisStoreOptions.fromUrl("redis://ignored", null, null)
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
        long written = oldMaster.replicationOffset();
        for (RedisServer replica : sentinels.replicas()) {
            await().atMost(Duration.ofSeconds(10)).until(() -> replica.replicationOffset() >= written);
        }

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
