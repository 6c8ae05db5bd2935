package io.idemkey.it;

import io.idemkey.core.RecordKey;
import io.idemkey.testing.RedisRecords;
import io.idemkey.testing.RedisServer;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.shrinkwrap.api.exporter.ZipExporter;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The seven scenarios of seed 002 ("Idempotency Key with Redis for distributed protection"), over
 * real HTTP against Payara Micro and a real Redis.
 */
@RunAsClient
class SeedScenariosIT extends ClientOfOneDeployment {

    private static final String PAYMENT = "{\"name\":\"order-42\",\"amount\":1999}";

    @Deployment
    static WebArchive deployment() {
        return Deployments.guardedApp("seed-scenarios", Map.of());
    }

    @Test
    void scenario1FirstRequestWithoutKeyIs400() {
        assertEquals(400, http.postJson("guarded/payments", null, PAYMENT).statusCode());
    }

    @Test
    void scenario2FirstRequestWithKeyRunsAndItsResultIsStoredInRedis() {
        String key = Http.newKey();
        HttpResponse<String> response = http.postJson("guarded/payments", key, PAYMENT);
        assertEquals(201, response.statusCode());
        assertEquals(1, http.executions(key));
        try (Jedis redis = TestRedis.get().client()) {
            String recordKey = RecordKey.of("idempotency:", "", key);
            assertEquals("C", RedisRecords.state(redis, recordKey), "the record is COMPLETED");
            long ttl = redis.pttl(recordKey);
            assertTrue(ttl > 23 * 3600_000L && ttl <= 24 * 3600_000L, "expires after ttlHours: " + ttl);
        }
    }

    @Test
    void scenario3SameKeyAgainReturnsTheCachedResult() {
        String key = Http.newKey();
        HttpResponse<String> first = http.postJson("guarded/payments", key, PAYMENT);
        HttpResponse<String> second = http.postJson("guarded/payments", key, PAYMENT);
        assertEquals(201, second.statusCode());
        assertEquals(first.body(), second.body());
        assertEquals("true", second.headers().firstValue("Idempotent-Replayed").orElse(null));
        assertEquals(1, http.executions(key));
    }

    @Test
    void scenario4SameKeyWithDifferentBodyIs422() {
        String key = Http.newKey();
        http.postJson("guarded/payments", key, PAYMENT);
        assertEquals(422, http.postJson("guarded/payments", key, PAYMENT.replace("1999", "2999")).statusCode());
        assertEquals(1, http.executions(key));
    }

    @Test
    void scenario5SimultaneousRequestsWithOneKeyRunOnceTheOthersGet409() throws Exception {
        int keys = 20;
        int concurrent = 8;
        ExecutorService threads = Executors.newFixedThreadPool(concurrent);
        try {
            for (int k = 0; k < keys; k++) {
                String key = Http.newKey();
                CyclicBarrier start = new CyclicBarrier(concurrent);
                List<Future<HttpResponse<String>>> responses = new ArrayList<>();
                for (int i = 0; i < concurrent; i++) {
                    responses.add(threads.submit(() -> {
                        start.await();
                        return http.post("guarded/slow?millis=300", key);
                    }));
                }
                int ok = 0;
                int conflict = 0;
                for (Future<HttpResponse<String>> response : responses) {
                    int status = response.get().statusCode();
                    ok += status == 200 ? 1 : 0;
                    conflict += status == 409 ? 1 : 0;
                }
                assertEquals(1, ok, "exactly one request runs");
                assertEquals(concurrent - 1, conflict, "the others are told the first is in progress");
                assertEquals(1, http.executions(key));
            }
        } finally {
            threads.shutdownNow();
        }
    }

    /**
     * Pod A (a second server of this run's kind, on the same Redis) is killed with {@code kill -9}
     * while it runs the request; pod B refuses the retry with 409 while A's lease lasts, then runs it
     * once.
     */
    @Test
    void scenario6AfterPodACrashesMidRequestPodBRunsTheRetryOnceTheLockTtlHasPassed() throws Exception {
        Path war = Files.createTempDirectory("idemkey-pod-a").resolve("pod-a.war");
        Deployments.guardedApp("pod-a", Map.of()).as(ZipExporter.class).exportTo(war.toFile(), true);
        String key = Http.newKey();
        try (ServerProcess podA = ServerProcess.startForTests(ServerProcess.Kind.ofThisRun(), List.of(war))) {
            Http a = new Http(podA.uri("pod-a"));
            CompletableFuture.runAsync(() -> {
                try {
                    a.send(a.request("guarded/crashable").header(Http.KEY, key).header("X-Sleep-Millis", "60000")
                            .POST(HttpRequest.BodyPublishers.noBody()).build());
                } catch (RuntimeException connectionDropped) {
                    // expected: the server dies under the request
                }
            });
            a.awaitExecution(key);
            podA.kill();
        }
        HttpResponse<String> retry = http.post("guarded/crashable", key);
        assertEquals(409, retry.statusCode(), "pod A's lease still holds the key");
        long deadline = System.nanoTime() + 10_000_000_000L; // lockTtlSeconds is 2
        while (retry.statusCode() == 409) {
            assertTrue(System.nanoTime() < deadline, "the crashed pod's lock never expired");
            Thread.sleep(100);
            retry = http.post("guarded/crashable", key);
        }
        assertEquals(200, retry.statusCode());
        assertEquals(1, http.executions(key), "pod B ran it exactly once");
    }

    @Test
    void scenario7RedisDownOnAPaymentEndpointIs503() {
        RedisServer redis = TestRedis.get();
        String key = Http.newKey();
        redis.stop();
        try {
            HttpResponse<String> response = http.postJson("guarded/payments", key, PAYMENT);
            assertEquals(503, response.statusCode());
            assertTrue(response.headers().firstValue("Retry-After").isPresent());
        } finally {
            redis.restart();
        }
        assertEquals(0, http.executions(key), "the payment did not run");
    }
}
