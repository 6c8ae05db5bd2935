package io.idemkey.core;

import io.idemkey.IdempotencyException;
import io.idemkey.store.redis.RedisIdempotencyStore;
import io.idemkey.store.redis.RedisStoreOptions;
import io.idemkey.testing.RedisServer;
import jakarta.json.bind.JsonbBuilder;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Idempotent calls from real threads against a real Redis: two "servers" (engines on one store), as
 * consumers on two instances receive one message delivered twice.
 */
class IdempotentCallsOnRedisTest {

    private static RedisServer redis;
    private static ScheduledExecutorService timers;

    @BeforeAll
    static void startRedis() {
        redis = RedisServer.start();
        timers = Executors.newScheduledThreadPool(2);
    }

    @AfterAll
    static void stopRedis() {
        timers.shutdownNow();
        redis.close();
    }

    private static IdempotentCalls server(RedisIdempotencyStore store) {
        IdempotencyEngine engine = IdempotencyEngine.builder(store, new ExecutorScheduler(timers)).build();
        return new IdempotentCalls(engine, new Fingerprint(), JsonbBuilder.create(), "idempotency:", 255);
    }

    @Test
    void oneMessageDeliveredToSixteenConsumersOnTwoServersAtOnceRunsOnce() throws Exception {
        CallPolicy policy = new CallPolicy("payments", new IdempotencyPolicy(Duration.ofHours(1), Duration.ofSeconds(5),
                true, Set.of(), false, Duration.ZERO), List.of());
        try (RedisIdempotencyStore storeA = RedisIdempotencyStore.open(RedisStoreOptions.fromUrl(redis.url(), null, null));
             RedisIdempotencyStore storeB = RedisIdempotencyStore.open(RedisStoreOptions.fromUrl(redis.url(), null, null))) {
            List<IdempotentCalls> servers = List.of(server(storeA), server(storeB));
            for (int message = 0; message < 20; message++) {
                String key = "msg-" + message;
                AtomicInteger runs = new AtomicInteger();
                Set<String> outcomes = ConcurrentHashMap.newKeySet();
                AtomicInteger inProgress = new AtomicInteger();
                CountDownLatch start = new CountDownLatch(1);
                ExecutorService consumers = Executors.newFixedThreadPool(16);
                List<Future<?>> done = new ArrayList<>();
                for (int consumer = 0; consumer < 16; consumer++) {
                    IdempotentCalls calls = servers.get(consumer % 2);
                    done.add(consumers.submit(() -> {
                        start.await();
                        try {
                            outcomes.add(calls.call(policy, key, String.class, List.of("p"), IdempotentCalls.StoreCalls.DIRECT, () -> {
                                Thread.sleep(50);
                                return "applied#" + runs.incrementAndGet();
                            }));
                        } catch (IdempotencyException.InProgress requeued) {
                            inProgress.incrementAndGet();
                        }
                        return null;
                    }));
                }
                start.countDown();
                for (Future<?> f : done) {
                    f.get();
                }
                consumers.shutdown();
                String redelivered = servers.get(1).call(policy, key, String.class, List.of("p"), IdempotentCalls.StoreCalls.DIRECT,
                        () -> "applied#" + runs.incrementAndGet());

                assertEquals(1, runs.get(), key + " ran more than once");
                assertEquals(Set.of("applied#1"), outcomes);
                assertEquals("applied#1", redelivered);
                assertTrue(inProgress.get() >= 1, "the others met the running first call: " + inProgress.get());
            }
        }
    }
}
