package io.idemkey.it;

import io.idemkey.testing.RedisSentinels;
import io.idemkey.testing.RedisServer;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.URL;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * This run's test server with {@code idempotency.redis.mode=sentinel} (1 master, 2 replicas, 3
 * sentinels on loopback): the master is killed while requests arrive; the server follows the
 * promoted replica without a restart; meanwhile a fail-closed endpoint answers 503 and a
 * fail-open one runs, never another error and never a hang; completed keys are replayed after.
 */
@RunAsClient
@ExtendWith(ArquillianExtension.class)
class SentinelFailoverIT {

    private static RedisSentinels sentinels;

    @ArquillianResource
    URL base;

    @Deployment
    static WebArchive deployment() {
        sentinels = RedisSentinels.start();
        String nodes = sentinels.sentinels().stream().map(node -> node.getHost() + ":" + node.getPort())
                .collect(Collectors.joining(","));
        return Deployments.guardedApp("sentinel", Map.of("idempotency.redis.mode", "sentinel",
                "idempotency.redis.nodes", nodes, "idempotency.redis.sentinel.master", RedisSentinels.MASTER_NAME));
    }

    @AfterAll
    static void stopSentinels() {
        if (sentinels != null) {
            sentinels.close();
        }
    }

    @Test
    void aMasterKilledUnderLoadIsFollowedWithoutARestartAnsweringOnly503OrRunningMeanwhile() throws Exception {
        Http http = new Http(base);
        List<String> completed = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            String key = Http.newKey();
            assertEquals(201, http.postJson("guarded/payments", key, "{\"name\":\"n\",\"amount\":5}").statusCode());
            completed.add(key);
        }
        RedisServer oldMaster = sentinels.master();
        long written = oldMaster.replicationOffset();
        for (RedisServer replica : sentinels.replicas()) {
            await().atMost(Duration.ofSeconds(10)).until(() -> replica.replicationOffset() >= written);
        }

        AtomicBoolean followed = new AtomicBoolean();
        Map<String, Long> statuses = new ConcurrentHashMap<>();
        AtomicLong slowestMillis = new AtomicLong();
        ExecutorService load = Executors.newFixedThreadPool(4);
        List<Future<?>> callers = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            boolean failOpen = t % 2 == 1;
            callers.add(load.submit(() -> {
                for (int i = 0; !followed.get() || i % 20 != 0; i++) {
                    long start = System.nanoTime();
                    HttpResponse<String> response = failOpen ? http.post("guarded/fail-open", Http.newKey())
                            : http.postJson("guarded/payments", Http.newKey(), "{\"name\":\"n\",\"amount\":5}");
                    slowestMillis.accumulateAndGet(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), Math::max);
                    statuses.merge((failOpen ? "fail-open " : "fail-closed ") + response.statusCode(), 1L, Long::sum);
                }
            }));
        }
        sentinels.killMasterAndAwaitFailover();
        await().atMost(Duration.ofSeconds(30)).until(() ->
                http.postJson("guarded/payments", Http.newKey(), "{\"name\":\"n\",\"amount\":5}").statusCode() == 201);
        followed.set(true);
        for (Future<?> caller : callers) {
            caller.get(120, TimeUnit.SECONDS);
        }
        load.shutdown();

        System.out.printf("sentinel failover under HTTP load: %s, slowest %d ms%n", statuses, slowestMillis.get());
        assertTrue(statuses.keySet().stream().allMatch(s -> List.of("fail-closed 201", "fail-closed 503", "fail-open 200")
                .contains(s)), "only 201, 503 (fail-closed) and 200 (fail-open, run unprotected): " + statuses);
        assertTrue(statuses.getOrDefault("fail-closed 503", 0L) > 0, "the outage was seen: " + statuses);
        assertTrue(slowestMillis.get() < 5_000, "no hang: slowest " + slowestMillis + " ms");
        for (String key : completed) {
            HttpResponse<String> replay = http.postJson("guarded/payments", key, "{\"name\":\"n\",\"amount\":5}");
            assertEquals(201, replay.statusCode());
            assertEquals("true", replay.headers().firstValue("Idempotent-Replayed").orElse(null),
                    "completed before the kill, replayed after it");
            assertEquals(1, http.executions(key));
        }
    }
}
