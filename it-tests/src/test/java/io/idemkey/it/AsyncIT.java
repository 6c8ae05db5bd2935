package io.idemkey.it;

import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Asynchronous resources ({@code CompletionStage}, {@code AsyncResponse}) and {@code StreamingOutput}
 * responses: recorded and replayed like synchronous ones; an unmapped failure releases the key; a
 * response too large to record is delivered whole and its key released.
 */
@RunAsClient
class AsyncIT extends ClientOfOneDeployment {

    @Deployment
    static WebArchive deployment() {
        // a 1 s lease: the slow answers below outlive it several times over, so only renewals keep their key
        return Deployments.guardedApp("async", Map.of(
                "io.idemkey.it.app.AsyncResource/stage/IdempotencyKey/lockTtlSeconds", "1",
                "io.idemkey.it.app.AsyncResource/suspended/IdempotencyKey/lockTtlSeconds", "1",
                "io.idemkey.it.app.AsyncResource/stream/IdempotencyKey/lockTtlSeconds", "1"));
    }

    @Test
    void completionStageResultIsRecordedAndReplayed() {
        assertRecordedAndReplayed("async/stage", 201);
    }

    @Test
    void asyncResponseResumedWithAResultIsRecordedAndReplayed() {
        assertRecordedAndReplayed("async/suspended", 201);
    }

    @Test
    void completionStageFailingWithAnUnmappedExceptionReleasesTheKey() {
        assertReleased("async/stage-fails");
    }

    @Test
    void asyncResponseResumedWithAnUnmappedExceptionReleasesTheKey() {
        assertReleased("async/suspended-fails");
    }

    @Test
    void streamingOutputIsRecordedAndReplayedByteForByte() {
        assertRecordedAndReplayed("async/stream?kib=64", 200);
    }

    @Test
    void responseLargerThanTheStoredLimitButCompressibleIsStoredCompressedAndReplayed() {
        // 2 MiB of repeated letters: above idempotency.max-response-bytes (1 MiB) raw, far below compressed
        HttpResponse<String> first = assertRecordedAndReplayed("async/stream?kib=2048", 200);
        assertTrue(first.body().length() > 2 * 1024 * 1024);
    }

    @Test
    void responseTooLargeToRecordIsDeliveredWholeAndItsKeyReleased() {
        String key = Http.newKey();
        HttpResponse<String> first = http.post("async/stream?kib=5120", key);
        HttpResponse<String> retry = http.post("async/stream?kib=5120", key);
        assertEquals(200, first.statusCode());
        assertTrue(first.body().length() > 5 * 1024 * 1024 && first.body().endsWith("\"}"), "delivered whole");
        assertEquals(200, retry.statusCode());
        assertFalse(retry.headers().firstValue("Idempotent-Replayed").isPresent(), "not recorded: it ran again");
        assertEquals(2, http.executions(key));
    }

    private HttpResponse<String> assertRecordedAndReplayed(String path, int status) {
        String key = Http.newKey();
        HttpResponse<String> first = http.post(path, key);
        HttpResponse<String> retry = http.post(path, key);
        // both answers in the message: seen once on Payara Micro 6 (the class's first test, 2026-11-29), the
        // first answer 200 with execution 1's body instead of 201, unexplained; the retry tells whether 200 was recorded
        Supplier<String> answers = () -> "first: " + describe(first) + "; retry: " + describe(retry);
        assertEquals(status, first.statusCode(), answers);
        assertEquals(status, retry.statusCode(), answers);
        assertEquals(first.body(), retry.body());
        assertEquals(first.headers().firstValue("Content-Type"), retry.headers().firstValue("Content-Type"));
        assertEquals("true", retry.headers().firstValue("Idempotent-Replayed").orElse(null));
        assertEquals(1, http.executions(key));
        return first;
    }

    /** An answer's status, headers and the start of its body (some are megabytes). */
    private static String describe(HttpResponse<String> answer) {
        String body = answer.body();
        return answer.statusCode() + " " + answer.headers().map() + " "
                + (body.length() > 300 ? body.substring(0, 300) + "... (" + body.length() + " characters)" : body);
    }

    @ParameterizedTest
    @ValueSource(strings = {"async/stage?millis=3000", "async/suspended?millis=3000", "async/stream?kib=6&pauseMillis=500"})
    void answerSlowerThanItsLeaseKeepsTheKeyUntilItIsWrittenAndRunsOnce(String path) throws Exception {
        String key = Http.newKey();
        CompletableFuture<HttpResponse<String>> first = CompletableFuture.supplyAsync(() -> http.post(path, key));
        http.awaitExecution(key);
        List<HttpResponse<String>> answeredMeanwhile = new ArrayList<>();
        while (!first.isDone()) {
            HttpResponse<String> retry = http.post(path, key);
            if (!first.isDone() && retry.statusCode() != 409) {
                // the record is completed just before the server writes the answer (so that a retry
                // then is replayed, not refused), which the first caller may still be reading: then
                // only the first answer, replayed, is right
                answeredMeanwhile.add(retry);
            }
            Thread.sleep(300);
        }
        HttpResponse<String> answer = first.get();
        assertTrue(answer.statusCode() == 200 || answer.statusCode() == 201, answer.body());
        assertEquals(1, http.executions(key));
        for (HttpResponse<String> retry : answeredMeanwhile) {
            assertEquals(answer.body(), retry.body(), "a retry while the first answer was being made: " + retry.statusCode());
            assertEquals("true", retry.headers().firstValue("Idempotent-Replayed").orElse(null), "replayed");
        }
        assertEquals(answer.body(), http.post(path, key).body(), "replayed");
    }

    private void assertReleased(String path) {
        String key = Http.newKey();
        assertEquals(500, http.post(path, key).statusCode());
        assertEquals(500, http.post(path, key).statusCode(), "released: the retry runs again");
        assertEquals(2, http.executions(key));
    }
}
