package io.idemkey.it;

import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/** {@code idempotency.scope=header:X-Tenant}: the tenant header separates key spaces. */
@RunAsClient
class HeaderScopeIT extends ClientOfOneDeployment {

    @Deployment
    static WebArchive deployment() {
        return Deployments.guardedApp("header-scope", Map.of("idempotency.scope", "header:X-Tenant"));
    }

    @Test
    void tenantsReusingOneKeyEachGetTheirOwnResponse() {
        String key = Http.newKey();
        HttpResponse<String> a = post("tenant-a", key);
        HttpResponse<String> b = post("tenant-b", key);
        assertNotEquals(a.body(), b.body());
        assertEquals(a.body(), post("tenant-a", key).body());
        assertEquals(b.body(), post("tenant-b", key).body());
    }

    @Test
    void separatorsInTenantOrKeyCannotAddressAnotherTenantsRecord() {
        String suffix = Http.newKey();
        // tenant "x:y" with key "k" against tenant "x" with key "y:k": different records
        HttpResponse<String> first = post("x:y" + suffix, "k");
        HttpResponse<String> second = post("x", "y" + suffix + ":k");
        assertEquals(201, first.statusCode());
        assertEquals(201, second.statusCode());
        assertNotEquals(first.body(), second.body());
        assertEquals(first.body(), post("x:y" + suffix, "k").body());
    }

    @Test
    void requestWithoutTheScopeHeaderIsRefusedRatherThanSharingAnAnonymousScope() {
        String key = Http.newKey();
        HttpResponse<String> response = http.postJson("guarded/echo", key, "{}");
        assertEquals(400, response.statusCode());
        assertEquals(true, response.body().contains("https://idemkey.io/problems/scope-missing"), response.body());
        assertEquals(0, http.executions(key));
    }

    @Test
    void aScopeHeaderLongerThanTheKeyLimitIsRefusedWith400AndRunsNothing() {
        String key = Http.newKey();
        HttpResponse<String> response = post("t" + "x".repeat(255), key); // 256 characters, the limit is 255
        assertEquals(400, response.statusCode(), response.body());
        assertEquals(true, response.body().contains("https://idemkey.io/problems/scope-invalid"), response.body());
        assertEquals(true, response.headers().firstValue("Content-Type").orElse("").startsWith("application/problem+json"),
                response.headers().map().toString());
        assertEquals(0, http.executions(key));
        assertEquals(201, post("x".repeat(255), key).statusCode(), "255 characters are accepted");
    }

    private HttpResponse<String> post(String tenant, String key) {
        return http.send(http.request("guarded/echo").header(Http.KEY, key).header("X-Tenant", tenant)
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString("{}")).build());
    }
}
