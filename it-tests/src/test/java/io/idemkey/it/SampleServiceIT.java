package io.idemkey.it;

import jakarta.json.JsonObject;
import jakarta.json.JsonValue;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The sample service as README's first command starts it: the sample WAR on this run's server, with
 * nothing but {@code liberty/server.xml} on Open Liberty (no test features), walked through the curl
 * lines the launcher prints.
 */
class SampleServiceIT {

    private static ServerProcess server;
    private static Http http;
    private static ServerDocuments documents;

    @BeforeAll
    static void start() {
        server = ServerProcess.start(ServerProcess.Kind.ofThisRun(), List.of(Path.of("target", "idemkey-sample.war")),
                ServerProcess.freePort(), Map.of(
                        "idempotency.redis.url", TestRedis.get().url(),
                        "sample.gateway.latency-ms", "1000"));
        http = new Http(server.uri("idemkey-sample"));
        documents = new ServerDocuments(server.uri("idemkey-sample"));
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void orderIsPlacedOnceReplayedWithItsLocationAndRefusedForAnotherBody() {
        String key = "\"order-" + Http.newKey() + "\"";
        HttpResponse<String> placed = http.postJson("api/orders", key, "{\"item\":\"book\",\"quantity\":1}");
        assertEquals(201, placed.statusCode(), placed.body() + "\n" + server.log());
        String location = placed.headers().firstValue("Location").orElseThrow();

        HttpResponse<String> replayed = http.postJson("api/orders", key, "{\"quantity\":1,  \"item\":\"book\"}");
        assertEquals(201, replayed.statusCode());
        assertEquals(placed.body(), replayed.body());
        assertEquals(location, replayed.headers().firstValue("Location").orElse(null));
        assertEquals("true", replayed.headers().firstValue("Idempotent-Replayed").orElse(null));

        HttpResponse<String> otherBody = http.postJson("api/orders", key, "{\"item\":\"book\",\"quantity\":2}");
        assertEquals(422, otherBody.statusCode());
        assertEquals("application/problem+json", otherBody.headers().firstValue("Content-Type").orElse(null));
        assertEquals(200, http.get(location.substring(location.indexOf("api/orders/"))).statusCode());
    }

    @Test
    void twoChargesAtOnceAreOne201AndOne409AndARetryWithANewTimestampAndNonceIsReplayed() throws Exception {
        String key = Http.newKey();
        CompletableFuture<HttpResponse<String>> one = CompletableFuture.supplyAsync(() ->
                http.postJson("api/payments", key, payment("2026-11-22T10:00:00Z", "n-1")));
        CompletableFuture<HttpResponse<String>> other = CompletableFuture.supplyAsync(() ->
                http.postJson("api/payments", key, payment("2026-11-22T10:00:01Z", "n-2")));
        List<HttpResponse<String>> both = List.of(one.get(), other.get()); // the gateway takes 1 s
        HttpResponse<String> charged = both.stream().filter(r -> r.statusCode() == 201).findFirst()
                .orElseThrow(() -> new AssertionError("no 201: " + both));
        HttpResponse<String> refused = both.stream().filter(r -> r.statusCode() == 409).findFirst()
                .orElseThrow(() -> new AssertionError("no 409: " + both));
        assertTrue(refused.headers().firstValue("Retry-After").isPresent());

        HttpResponse<String> retried = http.postJson("api/payments", key, payment("2026-11-22T10:00:09Z", "n-3"));
        assertEquals(201, retried.statusCode());
        assertEquals(charged.body(), retried.body(), "clientTimestamp and requestNonce are not part of the fingerprint");
        assertEquals("true", retried.headers().firstValue("Idempotent-Replayed").orElse(null));
    }

    @Test
    void refundBeyondThePaymentIsA422ThatIsRecordedAndReplayed() {
        HttpResponse<String> charged = http.postJson("api/payments", Http.newKey(), payment("t", "n"));
        String refunds = "api/payments/" + Http.json(charged).getString("id") + "/refunds";
        String key = Http.newKey();

        HttpResponse<String> refused = http.postJson(refunds, key, "{\"amountCents\":5000}");
        assertEquals(422, refused.statusCode());
        assertTrue(refused.headers().firstValue("Idempotent-Replayed").isEmpty());
        HttpResponse<String> again = http.postJson(refunds, key, "{\"amountCents\":5000}");
        assertEquals(422, again.statusCode());
        assertEquals(refused.body(), again.body());
        assertEquals("true", again.headers().firstValue("Idempotent-Replayed").orElse(null));

        assertEquals(201, http.postJson(refunds, Http.newKey(), "{\"amountCents\":999}").statusCode());
    }

    @Test
    void readinessReportsTheRedisStore() {
        JsonObject check = http.storeCheck(200);
        assertEquals("UP", check.getString("status"));
        assertEquals("redis", check.getJsonObject("data").getString("store"));
        assertEquals("managed threads", check.getJsonObject("data").getString("lease-renewal"),
                "leases are renewed on threads of the server's managed thread factory");
    }

    @Test
    void orderWithoutAnItemIsRefusedByBeanValidationAndTheCorrectedRetryRuns() {
        String key = Http.newKey();
        assertEquals(400, http.postJson("api/orders", key, "{\"item\":\" \",\"quantity\":1}").statusCode());
        assertEquals(201, http.postJson("api/orders", key, "{\"item\":\"pen\",\"quantity\":1}").statusCode());
    }

    @Test
    void openApiDocumentsTheKeyTheProblemAnswersAndTheReplayWindowOfEveryGuardedOperation() {
        JsonObject document = documents.openApi();
        for (String path : List.of("/api/orders", "/api/payments", "/api/payments/{id}/refunds")) {
            JsonObject operation = ServerDocuments.operation(document, path, "post");
            JsonObject key = ServerDocuments.headerParameter(operation, "Idempotency-Key");
            assertNotNull(key, path + ": " + operation);
            assertTrue(key.getBoolean("required"), path);
            assertTrue(key.getString("description").contains("hours"), key.toString());
            JsonObject responses = operation.getJsonObject("responses");
            for (String status : List.of("400", "409", "413", "422", "503")) {
                assertTrue(responses.getJsonObject(status).getJsonObject("content").containsKey("application/problem+json"),
                        path + " " + status + ": " + responses);
            }
            assertTrue(responses.getJsonObject("409").getJsonObject("headers").containsKey("Retry-After"));
            assertTrue(responses.values().stream().map(JsonValue::asJsonObject)
                    .anyMatch(r -> r.containsKey("headers") && r.getJsonObject("headers").containsKey("Idempotent-Replayed")),
                    path + ": the replay marker is documented on its answers: " + responses);
        }
        assertEquals("PT48H", ServerDocuments.operation(document, "/api/payments", "post")
                .getJsonObject("x-idempotency").getString("replay-window"), "payments are replayed for 48 hours");
        assertEquals("PT24H", ServerDocuments.operation(document, "/api/orders", "post")
                .getJsonObject("x-idempotency").getString("replay-window"));
        assertNull(ServerDocuments.headerParameter(ServerDocuments.operation(document, "/api/orders/{id}", "get"),
                "Idempotency-Key"), "reads are not guarded");
        assertTrue(document.getJsonObject("components").getJsonObject("schemas").containsKey("IdempotencyProblem"));
    }

    @Test
    void metricsCountEachDecisionPerEndpointAndTimeTheStore() {
        String endpoint = "endpoint=\"POST /orders\"";
        String before = documents.metrics();
        String key = Http.newKey();
        assertEquals(201, http.postJson("api/orders", key, "{\"item\":\"cup\",\"quantity\":1}").statusCode());
        assertEquals(201, http.postJson("api/orders", key, "{\"item\":\"cup\",\"quantity\":1}").statusCode());
        assertEquals(201, http.postJson("api/orders", key, "{\"item\":\"cup\",\"quantity\":1}").statusCode());
        assertEquals(422, http.postJson("api/orders", key, "{\"item\":\"cup\",\"quantity\":2}").statusCode());
        String after = documents.metrics();
        assertEquals(1, delta(before, after, "idempotency_acquired_total", endpoint), after);
        assertEquals(1, delta(before, after, "idempotency_completed_total", endpoint));
        assertEquals(2, delta(before, after, "idempotency_replayed_total", endpoint));
        assertEquals(1, delta(before, after, "idempotency_mismatch_total", endpoint));
        assertFalse(after.contains(key), "metrics never carry the key");
        double acquires = ServerDocuments.value(after, "idempotency_store_latency_count", "operation=\"acquire\"")
                + ServerDocuments.value(after, "idempotency_store_latency_seconds_count", "operation=\"acquire\"");
        assertTrue(acquires >= 1, "the store's latency is timed per operation: " + after);
        assertTrue(after.contains("idempotency_in_flight"), after);
    }

    private static double delta(String before, String after, String name, String label) {
        return ServerDocuments.value(after, name, label) - ServerDocuments.value(before, name, label);
    }

    private static String payment(String clientTimestamp, String nonce) {
        return "{\"orderId\":\"ord_1\",\"amountCents\":1999,\"currency\":\"EUR\",\"clientTimestamp\":\""
                + clientTimestamp + "\",\"requestNonce\":\"" + nonce + "\"}";
    }
}
