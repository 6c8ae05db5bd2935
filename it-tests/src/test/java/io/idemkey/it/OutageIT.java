package io.idemkey.it;

import io.idemkey.testing.RedisRecords;
import io.idemkey.testing.RedisServer;
import jakarta.json.JsonObject;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.resps.ScanResult;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Redis goes away and comes back while the server keeps running: fail-closed endpoints answer 503 and
 * never run the method, fail-open ones run and count it, a method that finished while Redis was away
 * still answers and its record is completed once Redis is back, and nothing is left in progress for
 * ever. This Redis keeps an append-only file, as production Redis should (see docs/servers.md, Durability), so a restart
 * keeps its records.
 */
@RunAsClient
class OutageIT extends ClientOfOneDeployment {

    private static final int LOCK_TTL_SECONDS = 20;
    private static RedisServer redis;

    @Deployment
    static WebArchive deployment() {
        redis = RedisServer.start("--appendonly", "yes", "--appendfsync", "always");
        return Deployments.guardedApp("outage", Map.of(
                "idempotency.redis.url", redis.url(),
                "io.idemkey.it.app.GuardedResource/crashable/IdempotencyKey/lockTtlSeconds", Integer.toString(LOCK_TTL_SECONDS)));
    }

    @AfterAll
    static void stopRedis() {
        if (redis != null) {
            redis.close();
        }
    }

    @Test
    void duringAnOutageFailClosedAnswers503WithoutRunningAndFailOpenRunsAndIsCounted() {
        String payment = Http.newKey();
        String open = Http.newKey();
        long failOpenBefore = http.metric("idempotency.fail.open");
        long storeErrorsBefore = http.metric("idempotency.store.error");
        assertStoreReadiness(200, "UP");
        redis.stop();
        try {
            assertStoreReadiness(503, "DOWN");
            for (int i = 0; i < 3; i++) {
                HttpResponse<String> refused = http.postJson("guarded/payments", payment, "{\"name\":\"n\"}");
                assertEquals(503, refused.statusCode());
                assertTrue(refused.body().contains("https://idemkey.io/problems/store-unavailable"));
            }
            assertEquals(200, http.post("guarded/fail-open", open).statusCode());
            assertEquals(200, http.post("guarded/fail-open", open).statusCode());
        } finally {
            redis.restart();
        }
        assertStoreReadiness(200, "UP");
        assertEquals(0, http.executions(payment), "a fail-closed payment never ran");
        assertEquals(2, http.executions("open:" + open), "fail-open ran unprotected, twice");
        assertEquals(failOpenBefore + 2, http.metric("idempotency.fail.open"));
        assertTrue(http.metric("idempotency.store.error") >= storeErrorsBefore + 5);

        HttpResponse<String> afterwards = http.postJson("guarded/payments", payment, "{\"name\":\"n\"}");
        assertEquals(201, afterwards.statusCode(), "works again without restarting the server");
        assertEquals(afterwards.body(), http.postJson("guarded/payments", payment, "{\"name\":\"n\"}").body());
        assertEquals(1, http.executions(payment));
    }

    @Test
    void methodThatFinishesWhileRedisIsAwayStillAnswersAndIsRecordedOnceRedisReturns() throws Exception {
        String key = Http.newKey();
        CompletableFuture<HttpResponse<String>> running = CompletableFuture.supplyAsync(() ->
                http.send(http.request("guarded/crashable").header(Http.KEY, key).header("X-Sleep-Millis", "1500")
                        .POST(HttpRequest.BodyPublishers.noBody()).build()));
        http.awaitExecution(key);
        redis.stop();
        HttpResponse<String> answered;
        try {
            answered = running.get();
            assertEquals(200, answered.statusCode(), "never a 5xx for a method that succeeded");
        } finally {
            redis.restart();
        }
        long deadline = System.nanoTime() + LOCK_TTL_SECONDS * 1_000_000_000L;
        HttpResponse<String> retry = http.post("guarded/crashable", key);
        while (retry.statusCode() == 409) {
            assertTrue(System.nanoTime() < deadline, "the completion was never retried");
            Thread.sleep(200);
            retry = http.post("guarded/crashable", key);
        }
        assertEquals(answered.body(), retry.body(), "completed in the background once Redis was back");
        assertEquals("true", retry.headers().firstValue("Idempotent-Replayed").orElse(null));
        assertEquals(1, http.executions(key));
    }

    @Test
    void everyRecordInRedisExpiresNothingStaysInProgressForEver() {
        http.postJson("guarded/echo", Http.newKey(), "{}");
        try (Jedis jedis = redis.client()) {
            String cursor = ScanParams.SCAN_POINTER_START;
            int records = 0;
            do {
                ScanResult<String> page = jedis.scan(cursor, new ScanParams().match("*").count(500));
                for (String recordKey : page.getResult()) {
                    records++;
                    long ttl = jedis.pttl(recordKey);
                    assertTrue(ttl > 0, recordKey + " has no TTL");
                    if ("P".equals(RedisRecords.state(jedis, recordKey))) {
                        assertTrue(ttl <= LOCK_TTL_SECONDS * 1000L, recordKey + " in progress for " + ttl + " ms");
                    }
                }
                cursor = page.getCursor();
            } while (!cursor.equals(ScanParams.SCAN_POINTER_START));
            assertTrue(records > 0);
        }
    }

    /** MicroProfile Health readiness follows the store; Idemkey's counters travel with its check. */
    private void assertStoreReadiness(int status, String storeStatus) {
        JsonObject check = http.storeCheck(status);
        assertEquals(storeStatus, check.getString("status"));
        assertEquals("redis", check.getJsonObject("data").getString("store"));
        JsonValue failOpen = check.getJsonObject("data").get("idempotency.fail.open"); // Payara writes numbers as strings
        assertEquals(Long.toString(http.metric("idempotency.fail.open")),
                failOpen instanceof JsonString text ? text.getString() : failOpen.toString());
    }

}
