package io.idemkey.it;

import jakarta.json.JsonObject;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The operators' admin API on this run's server, against Redis: refused to anonymous callers (401)
 * and to callers outside {@code idempotency.admin.role} (403), problem+json that does not name the
 * role; a completed key's look-up (body only when asked, each body look-up in an audit line), a key
 * stuck in progress in the stuck list, its purge refused without force (409) and done with it, each
 * purge in one audit line naming who, what and why; a store that answers with an error gives a 503
 * problem, not the container's 500. (An application that did not enable it: {@code CallerScopeIT}.)
 */
@RunAsClient
class AdminApiIT extends ClientOfOneDeployment {

    private static final String ROLE = "idempotency-ops";

    @Deployment
    static WebArchive deployment() {
        return Deployments.guardedApp("admin-api", Map.of("idempotency.admin.enabled", "true",
                "idempotency.admin.role", ROLE, "idempotency.admin.show-bodies", "true"));
    }

    @Test
    void anonymousCallersGet401AndCallersOutsideTheRole403AsProblems() {
        HttpResponse<String> anonymous = admin(null, "GET", "stuck?older-than=PT1M");
        assertEquals(401, anonymous.statusCode(), anonymous.body());
        assertEquals("application/problem+json", anonymous.headers().firstValue("Content-Type").orElse("").split(";")[0]);
        assertTrue(anonymous.body().contains("admin-unauthenticated"), anonymous.body());
        assertFalse(anonymous.body().contains(ROLE), "the role is not named: " + anonymous.body());
        HttpResponse<String> alice = admin("alice", "GET", "stuck?older-than=PT1M");
        assertEquals(403, alice.statusCode(), alice.body());
        assertTrue(alice.body().contains("admin-forbidden"), alice.body());
        assertFalse(alice.body().contains(ROLE), "the role is not named: " + alice.body());
        HttpResponse<String> purge = admin("alice", "DELETE", "keys?caller=&key=x&reason=r");
        assertEquals(403, purge.statusCode(), "no purge outside the role either");
        HttpResponse<String> ops = admin("ops", "GET", "stuck?older-than=soon");
        assertEquals(400, ops.statusCode(), ops.body());
        assertTrue(ops.body().contains("ISO-8601"), ops.body());
    }

    @Test
    void aCompletedKeyIsLookedUpWithItsBodyOnlyWhenAskedThenPurgedWithAnAuditLine() {
        String key = Http.newKey();
        assertEquals(201, http.postJson("guarded/echo", key, "{\"amount\":7}").statusCode());
        HttpResponse<String> found = admin("ops", "GET", "keys?caller=&key=" + key);
        assertEquals(200, found.statusCode(), found.body());
        JsonObject state = Http.json(found);
        assertEquals("idempotency::" + key, state.getString("storeKey"));
        assertEquals("completed", state.getString("state"));
        assertEquals(201, state.getInt("status"));
        assertTrue(state.getInt("sizeBytes") > 0 && state.getJsonNumber("ttlLeftMs").longValue() > 0, found.body());
        assertEquals(32, state.getString("fingerprint").length());
        assertFalse(found.body().contains("execution"), "no body unless asked: " + found.body());
        assertFalse(auditLog().contains("record=\"idempotency::" + key + "\" outcome"), "a look-up without the body is not audited");
        HttpResponse<String> withBody = admin("ops", "GET", "keys?caller=&key=" + key + "&body=true");
        assertTrue(withBody.body().contains("\\\"execution\\\":1"), withBody.body());
        assertTrue(auditLog().contains("INFO idempotency-admin look-up-body by=\"ops\" record=\"idempotency::" + key
                + "\" outcome=SHOWN"), auditLog());

        HttpResponse<String> noReason = admin("ops", "DELETE", "keys?caller=&key=" + key);
        assertEquals(400, noReason.statusCode(), noReason.body());
        HttpResponse<String> purged = admin("ops", "DELETE", "keys?caller=&key=" + key + "&reason=" + encode("ticket 42: customer asked"));
        assertEquals(200, purged.statusCode(), purged.body());
        assertEquals(404, admin("ops", "GET", "keys?caller=&key=" + key).statusCode());
        assertTrue(auditLog().contains("INFO idempotency-admin purge by=\"ops\" record=\"idempotency::" + key
                + "\" force=false outcome=PURGED reason=\"ticket 42: customer asked\""), auditLog());
        assertEquals(201, http.postJson("guarded/echo", key, "{\"amount\":8}").statusCode(),
                "purged: the key runs again, with another body and no 422");
    }

    @Test
    void aKeyStuckInProgressIsListedRefusedAPurgeWithoutForceAndPurgedWithIt() throws Exception {
        String key = Http.newKey();
        CompletableFuture<HttpResponse<String>> running = CompletableFuture.supplyAsync(() ->
                http.post("guarded/slow?millis=8000", key));
        http.awaitExecution(key);
        String storeKey = "idempotency::" + key;
        await().atMost(Duration.ofSeconds(10)).until(() -> admin("ops", "GET", "stuck?older-than=1&limit=1000")
                .body().contains("\"storeKey\":\"" + storeKey + "\""));
        JsonObject state = Http.json(admin("ops", "GET", "keys?caller=&key=" + key));
        assertEquals("in-progress", state.getString("state"));
        assertTrue(state.getJsonNumber("ownerAgeMs").longValue() >= 1000, state.toString());
        assertTrue(state.getJsonNumber("leaseLeftMs").longValue() > 0, state.toString());
        assertFalse(admin("ops", "GET", "stuck?older-than=PT1H").body().contains(storeKey), "not an hour old");

        HttpResponse<String> refused = admin("ops", "DELETE", "keys?caller=&key=" + key + "&reason=stuck");
        assertEquals(409, refused.statusCode(), refused.body());
        assertTrue(refused.body().contains("admin-key-in-progress"), refused.body());
        HttpResponse<String> forced = admin("ops", "DELETE", "keys?caller=&key=" + key + "&reason=stuck&force=true");
        assertEquals(200, forced.statusCode(), forced.body());
        String audit = auditLog();
        assertTrue(audit.contains("by=\"ops\" record=\"" + storeKey + "\" force=false outcome=IN_PROGRESS reason=\"stuck\""), audit);
        assertTrue(audit.contains("by=\"ops\" record=\"" + storeKey + "\" force=true outcome=PURGED reason=\"stuck\""), audit);
        running.get();
    }

    /** A store that answers a look-up with an error of its own (here Redis: a key of another type) gives a 503 problem. */
    @Test
    void aStoreThatAnswersWithAnErrorGivesA503Problem() {
        String key = Http.newKey();
        try (Jedis redis = TestRedis.get().client()) {
            redis.lpush("idempotency::" + key, "not a record");
        }
        HttpResponse<String> failed = admin("ops", "GET", "keys?caller=&key=" + key);
        assertEquals(503, failed.statusCode(), failed.body());
        assertEquals("application/problem+json", failed.headers().firstValue("Content-Type").orElse("").split(";")[0]);
        assertTrue(failed.body().contains("store-unavailable"), failed.body());
    }

    private HttpResponse<String> admin(String user, String method, String operation) {
        return http.send(http.request("idempotency-admin/" + operation, user)
                .method(method, HttpRequest.BodyPublishers.noBody()).build());
    }

    private String auditLog() {
        return http.get("audit-log").body();
    }

    private static String encode(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
