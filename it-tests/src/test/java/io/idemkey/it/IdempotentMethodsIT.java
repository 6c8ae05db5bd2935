package io.idemkey.it;

import io.idemkey.core.RecordKey;
import io.idemkey.testing.RedisRecords;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import redis.clients.jedis.Jedis;

import java.net.URL;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code @Idempotent} methods of a CDI bean and the programmatic {@code Idempotency}, on the
 * Arquillian-managed server of this run with the Redis store. The bean ({@code IdempotentPayments})
 * counts its runs; {@code CallsResource} calls it and answers the outcome as text.
 */
@RunAsClient
@ExtendWith(ArquillianExtension.class)
class IdempotentMethodsIT {

    @ArquillianResource
    URL base;

    private Http http;

    @Deployment
    static WebArchive deployment() {
        return Deployments.guardedApp("idempotent-methods", Map.of());
    }

    @BeforeEach
    void client() {
        http = new Http(base);
    }

    private String call(String path) {
        return http.send(http.request("calls/" + path).POST(HttpRequest.BodyPublishers.noBody()).build()).body();
    }

    private int runs(String name) {
        return Integer.parseInt(http.get("calls/runs?name=" + Http.query(name)).body().trim());
    }

    @Test
    void aDuplicateCallGetsAnEqualValueOfTheGenericReturnTypeWithoutRunning() {
        String id = Http.newKey();
        long replayedBefore = http.metric("idempotency.replayed");
        String first = call("charge/" + id + "?cents=250");
        String duplicate = call("charge/" + id + "?cents=250");

        assertEquals("returned Receipt [{\"cents\":250,\"payment\":\"" + id + "\",\"run\":1}]", first);
        assertEquals(first, duplicate, "read back as List<Receipt>, equal to the first");
        assertEquals(1, runs("charge:" + id));
        assertEquals(replayedBefore + 1, http.metric("idempotency.replayed"), "counted as HTTP replays are");
        try (Jedis redis = TestRedis.get().client()) {
            assertEquals("C", RedisRecords.state(redis, RecordKey.ofCall("idempotency:", "it-payments", id)),
                    "recorded in the shared store, apart from HTTP records");
        }
    }

    @Test
    void aVoidMethodWithTheDefaultScopeRunsOnce() {
        String id = Http.newKey();
        assertEquals("returned nothing", call("notify/" + id));
        assertEquals("returned nothing", call("notify/" + id));
        assertEquals(1, runs("notify:" + id));
        try (Jedis redis = TestRedis.get().client()) {
            assertEquals("C", RedisRecords.state(redis, RecordKey.ofCall("idempotency:",
                    "io.idemkey.it.app.IdempotentPayments.notify", id)));
        }
    }

    @Test
    void aRecordedExceptionIsThrownAgainWithTheSameClassAndMessageWithoutRunning() {
        String id = Http.newKey();
        String declined = call("charge/" + id + "?cents=-5");
        assertEquals("threw Declined: declined: -5 is not an amount", declined);
        assertEquals(declined, call("charge/" + id + "?cents=-5"));
        assertEquals(1, runs("charge:" + id));
    }

    @Test
    void anUnrecordedExceptionReleasesTheKeyAndTheNextCallRuns() {
        String id = Http.newKey();
        assertEquals("threw IllegalStateException: the gateway timed out", call("charge/" + id + "?fail=true"));
        assertTrue(call("charge/" + id).startsWith("returned Receipt [{\"cents\":100,\"payment\":\"" + id + "\",\"run\":2}]"));
        assertEquals(2, runs("charge:" + id));
    }

    @Test
    void theKeyReusedWithOtherArgumentsThrowsKeyReused() {
        String id = Http.newKey();
        call("charge/" + id + "?cents=100");
        assertEquals("threw KeyReused: The key '" + id + "' was used before with different arguments",
                call("charge/" + id + "?cents=200"));
        assertEquals(1, runs("charge:" + id));
    }

    @Test
    void aDuplicateWhileTheFirstRunsThrowsInProgressAndLaterGetsTheOutcome() throws Exception {
        String id = Http.newKey();
        CompletableFuture<String> first = CompletableFuture.supplyAsync(() -> call("charge/" + id + "?sleep=3000"));
        await().atMost(Duration.ofSeconds(30)).until(() -> runs("charge:" + id) == 1);

        String duplicate = call("charge/" + id + "?sleep=3000");
        assertTrue(duplicate.startsWith("threw InProgress: A call with the key '" + id + "' is still running"), duplicate);

        String outcome = first.get(60, TimeUnit.SECONDS);
        assertEquals(outcome, call("charge/" + id + "?sleep=3000"));
        assertEquals(1, runs("charge:" + id));
    }

    @Test
    void theProgrammaticFormReturnsTheRecordedValueAndRethrowsARecordedException() {
        String id = Http.newKey();
        String first = call("programmatic/" + id + "?cents=70");
        assertEquals("returned Receipt [{\"cents\":70,\"payment\":\"" + id + "\",\"run\":1}]", first);
        assertEquals(first, call("programmatic/" + id + "?cents=70"));
        assertTrue(call("programmatic/" + id + "?cents=71").startsWith("threw KeyReused"));

        String declinedId = Http.newKey();
        assertEquals("threw Declined: declined: -1", call("programmatic/" + declinedId + "?cents=-1"));
        assertEquals("threw Declined: declined: -1", call("programmatic/" + declinedId + "?cents=-1"));
        assertEquals(1, runs("programmatic:" + id));
        assertEquals(1, runs("programmatic:" + declinedId));
    }
}
