package io.idemkey.it;

import jakarta.json.JsonObject;
import org.jboss.arquillian.container.test.api.Deployment;
import jakarta.json.JsonObject;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@code idempotency.store=memory} deployed on the server: the same answers as with Redis, and no
 * Redis involved at all (the configured URL points at a port nothing listens on).
 */
@RunAsClient
class MemoryStoreIT extends ClientOfOneDeployment {

    @Deployment
    static WebArchive deployment() {
        return Deployments.guardedApp("memory-store", Map.of("idempotency.store", "memory",
                "idempotency.redis.url", Deployments.UNREACHABLE_REDIS));
    }

    @Test
    void firstRequestRunsRetryIsReplayedAndAnotherBodyIsRefused() {
        String key = Http.newKey();
        HttpResponse<String> first = http.postJson("guarded/echo", key, "{\"a\":1}");
        HttpResponse<String> retry = http.postJson("guarded/echo", key, "{ \"a\" : 1 }");
        assertEquals(201, first.statusCode(), first.body());
        assertEquals(first.body(), retry.body());
        assertEquals(first.headers().firstValue("Location"), retry.headers().firstValue("Location"));
        assertEquals("true", retry.headers().firstValue("Idempotent-Replayed").orElse(null));
        assertEquals(422, http.postJson("guarded/echo", key, "{\"a\":2}").statusCode());
        assertEquals(1, http.executions(key));
    }

    @Test
    void requestWhileTheFirstRunsGets409AndServerErrorsRelease() throws Exception {
        String key = Http.newKey();
        Http.Held first = http.hold(key);
        try (first) {
            assertEquals(409, http.post("guarded/held", key).statusCode());
        }
        assertEquals(200, first.answer().statusCode());

        String failing = Http.newKey();
        assertEquals(500, http.post("guarded/server-error", failing).statusCode());
        assertEquals(500, http.post("guarded/server-error", failing).statusCode());
        assertEquals(2, http.executions(failing), "released: the retry ran again");
    }

    @Test
    void readinessIsUpWithoutAnyRedis() {
        JsonObject check = http.storeCheck(200);
        assertEquals("UP", check.getString("status"));
        assertEquals("memory", check.getJsonObject("data").getString("store"));
        assertEquals("managed threads", check.getJsonObject("data").getString("lease-renewal"),
                "leases are renewed on threads of the server's managed thread factory");
    }
}
