package io.idemkey.it;

import jakarta.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The sample service as README's first command starts it: the sample WAR on this run's server, with
 * nothing but {@code liberty/server.xml} on Open Liberty (no test features), walked through the curl
 * lines the launcher prints.
 */
class SampleServiceIT {

    private static ServerProcess server;
    private static Http http;

    @BeforeAll
    static void start() {
        server = ServerProcess.start(ServerProcess.Kind.ofThisRun(), List.of(Path.of("target", "idemkey-sample.war")),
                ServerProcess.freePort(), Map.of(
                        "idempotency.redis.url", TestRedis.get().url(),
                        "sample.gateway.latency-ms", "1000"));
        http = new Http(server.uri("idemkey-sample"));
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
        assertEquals("managed executor", check.getJsonObject("data").getString("lease-renewal"),
                "leases are renewed on the server's managed scheduled executor");
    }

    private static String payment(String clientTimestamp, String nonce) {
        return "{\"orderId\":\"ord_1\",\"amountCents\":1999,\"currency\":\"EUR\",\"clientTimestamp\":\""
                + clientTimestamp + "\",\"requestNonce\":\"" + nonce + "\"}";
    }
}
