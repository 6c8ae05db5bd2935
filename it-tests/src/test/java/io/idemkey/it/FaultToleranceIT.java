package io.idemkey.it;

import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.URL;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * MicroProfile Fault Tolerance's {@code @Retry} on a guarded resource method: its interceptor runs
 * outside Idemkey's and invokes the method again after a failed attempt. Each attempt is guarded as
 * the first (its lease renewed, its success recorded); a failed one keeps the key for the next; an
 * answer the last attempt did not give (a {@code @Fallback}'s) is not recorded, and when every
 * attempt failed the key is free again.
 */
@RunAsClient
@ExtendWith(ArquillianExtension.class)
class FaultToleranceIT {

    @ArquillianResource
    URL base;

    private Http http;

    @Deployment
    static WebArchive deployment() {
        return Deployments.guardedApp("fault-tolerance", Map.of());
    }

    @BeforeEach
    void client() {
        http = new Http(base);
    }

    private int attempts(String key) {
        return Integer.parseInt(http.get("retried/attempts?key=" + key).body().trim());
    }

    @Test
    void theAttemptAfterAnUnmappedFailureIsGuardedAndItsAnswerRecordedAndReplayed() {
        String key = Http.newKey();
        HttpResponse<String> first = http.post("retried/recovers", key);
        assertEquals(201, first.statusCode(), first.body());
        assertEquals(2, attempts(key));
        HttpResponse<String> retry = http.post("retried/recovers", key);
        assertEquals(201, retry.statusCode(), retry.body());
        assertEquals(first.body(), retry.body());
        assertEquals("true", retry.headers().firstValue("Idempotent-Replayed").orElse(null));
        assertEquals(2, attempts(key), "replayed: no attempt more");
    }

    /** The second attempt takes 3 s, past the 1 s lease: its lease is renewed, so a duplicate is refused meanwhile. */
    @Test
    void theAttemptAfterAMappedFailureHoldsItsLeaseWhileItRuns() throws Exception {
        String key = Http.newKey();
        CompletableFuture<HttpResponse<String>> slow = CompletableFuture.supplyAsync(() -> http.post("retried/mapped?sleep=3000", key));
        await().atMost(Duration.ofSeconds(10)).until(() -> attempts(key) == 2); // the 3 s attempt runs
        TestRedis.awaitLeaseRunOutStillInProgress(key); // past its 1 s lease: only a renewal keeps it
        HttpResponse<String> duplicate = http.post("retried/mapped?sleep=3000", key);
        assertEquals(409, duplicate.statusCode(), "the key is still held: " + duplicate.body());
        HttpResponse<String> first = slow.get(60, TimeUnit.SECONDS);
        assertEquals(201, first.statusCode(), first.body());
        assertEquals(2, attempts(key));
        HttpResponse<String> retry = http.post("retried/mapped?sleep=3000", key);
        assertEquals("true", retry.headers().firstValue("Idempotent-Replayed").orElse(null));
        assertEquals(first.body(), retry.body());
        assertEquals(2, attempts(key));
    }

    @Test
    void whenEveryAttemptFailsTheKeyIsFreeForTheRetry() {
        String key = Http.newKey();
        assertEquals(500, http.post("retried/never", key).statusCode());
        assertEquals(3, attempts(key));
        assertEquals(500, http.post("retried/never", key).statusCode(), "run again, not 409");
        assertEquals(6, attempts(key));
    }

    @Test
    void aFallbacksAnswerIsNotRecorded() {
        String key = Http.newKey();
        HttpResponse<String> fallback = http.post("retried/fallback", key);
        assertEquals(200, fallback.statusCode(), fallback.body());
        assertTrue(fallback.body().contains("\"attempt\":0"), fallback.body());
        assertEquals(2, attempts(key));
        HttpResponse<String> retry = http.post("retried/fallback", key);
        assertEquals(200, retry.statusCode());
        assertTrue(retry.headers().firstValue("Idempotent-Replayed").isEmpty(), "not replayed: the method failed");
        assertEquals(4, attempts(key));
    }
}
