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
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Keys are scoped per caller (the default, {@code idempotency.scope=principal}): two users reusing
 * one key each get their own execution and their own response.
 */
@RunAsClient
class CallerScopeIT extends ClientOfOneDeployment {

    @Deployment
    static WebArchive deployment() {
        return Deployments.guardedApp("caller-scope", Map.of());
    }

    @Test
    void twoUsersReusingOneKeyEachGetTheirOwnExecutionAndResponse() {
        String key = Http.newKey();
        HttpResponse<String> alice = whoami("alice", key);
        HttpResponse<String> bob = whoami("bob", key);
        HttpResponse<String> anonymous = whoami(null, key);
        assertTrue(alice.body().contains("\"caller\":\"alice\""), alice.body());
        assertTrue(bob.body().contains("\"caller\":\"bob\""), bob.body());
        assertTrue(anonymous.body().contains("\"caller\":\"anonymous\""), anonymous.body());
        assertNotEquals(alice.body(), bob.body());

        HttpResponse<String> aliceAgain = whoami("alice", key);
        HttpResponse<String> bobAgain = whoami("bob", key);
        assertEquals(alice.body(), aliceAgain.body(), "alice gets her own response back");
        assertEquals(bob.body(), bobAgain.body(), "bob gets his");
        assertEquals("true", bobAgain.headers().firstValue("Idempotent-Replayed").orElse(null));
    }

    /** The admin API (issue 29) is off unless enabled: its paths are unknown paths here, even to its role. */
    @Test
    void theAdminApiIsNotThereInAnApplicationThatDidNotEnableIt() {
        for (String user : new String[] {null, "alice", "ops"}) {
            assertEquals(404, http.send(http.request("idempotency-admin/stuck?older-than=PT1M", user).GET().build())
                    .statusCode(), "as " + user);
            assertEquals(404, http.send(http.request("idempotency-admin/keys?caller=&key=k&reason=r", user)
                    .DELETE().build()).statusCode(), "as " + user);
        }
    }

    @Test
    void aUserCannotReachAnotherUsersRecordWithADifferentBody() {
        String key = Http.newKey();
        assertEquals(201, post("alice", key, "{\"a\":1}").statusCode());
        assertEquals(201, post("bob", key, "{\"b\":2}").statusCode(), "not a 422: bob's key space is his own");
    }

    @Test
    void requestRefusedByTheApplicationsAuthenticationFilterTakesNoKey() {
        String key = Http.newKey();
        long acquired = http.metric("idempotency.acquired");
        HttpResponse<String> anonymous = account(null, key);
        assertEquals(401, anonymous.statusCode());
        assertEquals(acquired, http.metric("idempotency.acquired"), "refused before Idemkey's filter: no key taken");
        assertEquals(201, account("alice", key).statusCode());
    }

    @Test
    void requestRefusedByAnAuthorizationFilterAfterIdemkeysReleasesTheKey() {
        String key = Http.newKey();
        long acquired = http.metric("idempotency.acquired");
        long released = http.metric("idempotency.released");
        assertEquals(403, account("bob", key).statusCode());
        assertEquals(acquired + 1, http.metric("idempotency.acquired"));
        assertEquals(released + 1, http.metric("idempotency.released"), "the method never started: the key is released");
        HttpResponse<String> again = account("bob", key);
        assertEquals(403, again.statusCode(), "not a replay of the 403, and not a 409: the key was free again");
        assertTrue(again.headers().firstValue("Idempotent-Replayed").isEmpty());
        assertEquals(0, http.executions("bob:" + key));
    }

    private HttpResponse<String> account(String user, String key) {
        return http.postAs(user, "guarded/account", key);
    }

    private HttpResponse<String> whoami(String user, String key) {
        return http.postAs(user, "guarded/whoami", key);
    }

    private HttpResponse<String> post(String user, String key, String json) {
        return http.send(http.request("guarded/echo", user).header(Http.KEY, key)
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(json)).build());
    }
}
