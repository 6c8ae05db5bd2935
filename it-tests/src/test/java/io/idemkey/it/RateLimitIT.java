package io.idemkey.it;

import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code idempotency.rate-limit.per-key=5/3s}: a client hammering one key gets 429 after five
 * requests, whatever they were answered (a run, replays); other keys and other callers are not
 * affected; the count ends with its window.
 */
@RunAsClient
class RateLimitIT extends ClientOfOneDeployment {

    @Deployment
    static WebArchive deployment() {
        return Deployments.guardedApp("rate-limit", Map.of("idempotency.rate-limit.per-key", "5/3s"));
    }

    @Test
    void keyHammeredBeyondTheLimitGets429WhileOtherKeysAndCallersAreServed() {
        String key = Http.newKey();
        HttpResponse<String> first = http.postJson("guarded/echo", key, "{}");
        assertEquals(201, first.statusCode(), first.body());
        for (int i = 2; i <= 5; i++) {
            HttpResponse<String> replay = http.postJson("guarded/echo", key, "{}");
            assertEquals(201, replay.statusCode(), "request " + i + ": " + replay.body());
            assertEquals(first.body(), replay.body());
        }
        HttpResponse<String> limited = http.postJson("guarded/echo", key, "{}");
        assertEquals(429, limited.statusCode(), limited.body());
        assertEquals("application/problem+json", limited.headers().firstValue("Content-Type").orElse("").split(";")[0]);
        assertTrue(limited.body().contains("https://idemkey.io/problems/rate-limited"), limited.body());
        assertTrue(limited.body().contains("\"status\":429"), limited.body());
        long retryAfter = Long.parseLong(limited.headers().firstValue("Retry-After").orElseThrow());
        assertTrue(retryAfter >= 1 && retryAfter <= 3, "Retry-After " + retryAfter);
        Http.RawResponse raw = http.rawPostJson("guarded/echo", key, "{}");
        assertEquals("HTTP/1.1 429 Too Many Requests", raw.statusLine(), raw.head());
        assertEquals(1, http.executions(key));

        assertEquals(201, http.postJson("guarded/echo", Http.newKey(), "{}").statusCode(), "another key");
        HttpResponse<String> otherCaller = http.send(http.request("guarded/echo", "alice").header(Http.KEY, key)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{}")).build());
        assertEquals(201, otherCaller.statusCode(), "the same key of another caller is another key: " + otherCaller.body());
    }

    @Test
    void requestsThatReachTheStoreAreCountedThereInTheAcquireScript() throws Exception {
        // While the first request runs, every retry reaches Redis (nothing to replay from a cache yet).
        String key = Http.newKey();
        Http.Held first = http.hold(key); // until released (the 5/3s window still bounds the six requests)
        HttpResponse<String> limited;
        try (first) {
            for (int i = 2; i <= 5; i++) {
                assertEquals(409, http.post("guarded/held", key).statusCode(), "request " + i);
            }
            limited = http.post("guarded/held", key);
        }
        assertEquals(429, limited.statusCode(), limited.body());
        assertTrue(limited.body().contains("https://idemkey.io/problems/rate-limited"), limited.body());
        assertEquals(200, first.answer().statusCode());
        assertEquals(1, http.executions(key));
    }

    @Test
    void countEndsWithItsWindow() throws Exception {
        String key = Http.newKey();
        for (int i = 1; i <= 5; i++) {
            http.postJson("guarded/echo", key, "{}");
        }
        HttpResponse<String> limited = http.postJson("guarded/echo", key, "{}");
        assertEquals(429, limited.statusCode());
        long retryAfterSeconds = Long.parseLong(limited.headers().firstValue("Retry-After").orElseThrow());
        // the window is fixed: requests within it (refused ones too) do not move its end; wait for the first one past it
        HttpResponse<String> afterWindow = await().atMost(Duration.ofSeconds(retryAfterSeconds + 5)).pollInterval(Duration.ofMillis(100))
                .until(() -> http.postJson("guarded/echo", key, "{}"), response -> response.statusCode() != 429);
        assertEquals(201, afterWindow.statusCode(), afterWindow.body());
        assertEquals("true", afterWindow.headers().firstValue("Idempotent-Replayed").orElse(null));
        assertEquals(1, http.executions(key));
    }
}
