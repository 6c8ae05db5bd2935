package io.idemkey.it;

import org.jboss.shrinkwrap.api.exporter.ZipExporter;
import org.junit.jupiter.api.Test;

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
 * real HTTP, against the test application on the server and store of the subclass.
 */
abstract class SeedScenarioTests {

    static final String PAYMENT = "{\"name\":\"order-42\",\"amount\":1999}";

    /** The test application on the subclass's server. */
    Http http;

    /** Asserts that the key's record is completed and expires after ttlHours (24). */
    abstract void assertRecordCompletedForADay(String key);

    /** Pod A: a second server of this run's kind on the same store, with the test application as {@code pod-a}. */
    abstract ServerProcess startPodA(Path war);

    /** The configuration of pod A's application (its store). */
    abstract Map<String, String> podAConfig();

    /** Stops the store (an outage); {@link #restartStore()} brings it back with its records. */
    abstract void stopStore();

    abstract void restartStore();

    @Test
    void scenario1FirstRequestWithoutKeyIs400() {
        assertEquals(400, http.postJson("guarded/payments", null, PAYMENT).statusCode());
    }

    @Test
    void scenario2FirstRequestWithKeyRunsAndItsResultIsStored() {
        String key = Http.newKey();
        HttpResponse<String> response = http.postJson("guarded/payments", key, PAYMENT);
        assertEquals(201, response.statusCode());
        assertEquals(1, http.executions(key));
        assertRecordCompletedForADay(key);
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
        int conflicts = 0;
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
                int replayed = 0;
                for (Future<HttpResponse<String>> response : responses) {
                    HttpResponse<String> answer = response.get();
                    boolean replay = answer.headers().firstValue("Idempotent-Replayed").orElse("").equals("true");
                    ok += answer.statusCode() == 200 && !replay ? 1 : 0;
                    replayed += answer.statusCode() == 200 && replay ? 1 : 0;
                    conflict += answer.statusCode() == 409 ? 1 : 0;
                }
                assertEquals(1, ok, "exactly one request runs");
                // a request the machine held back until the first had finished gets its response, replayed
                assertEquals(concurrent - 1, conflict + replayed, "the others are told the first is in progress");
                assertEquals(1, http.executions(key));
                conflicts += conflict;
            }
            assertTrue(conflicts > keys, "the requests overlapped: " + conflicts + " conflicts for " + keys + " keys");
        } finally {
            threads.shutdownNow();
        }
    }

    /**
     * Pod A (a second server of this run's kind, on the same store) is killed with {@code kill -9}
     * while it runs the request; pod B refuses the retry with 409 while A's lease lasts, then runs it
     * once.
     */
    @Test
    void scenario6AfterPodACrashesMidRequestPodBRunsTheRetryOnceTheLockTtlHasPassed() throws Exception {
        Path war = Files.createTempDirectory("idemkey-pod-a").resolve("pod-a.war");
        Deployments.guardedApp("pod-a", podAConfig()).as(ZipExporter.class).exportTo(war.toFile(), true);
        String key = Http.newKey();
        try (ServerProcess podA = startPodA(war)) {
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
    void scenario7StoreDownOnAPaymentEndpointIs503() {
        String key = Http.newKey();
        stopStore();
        try {
            HttpResponse<String> response = http.postJson("guarded/payments", key, PAYMENT);
            assertEquals(503, response.statusCode());
            assertTrue(response.headers().firstValue("Retry-After").isPresent());
        } finally {
            restartStore();
        }
        assertEquals(0, http.executions(key), "the payment did not run");
    }
}
