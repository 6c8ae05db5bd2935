package io.idemkey.it;

import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code idempotency.scope=global}: one key space for every caller, which is why docs/http.md calls it
 * unsafe for multi-tenant APIs: a second caller reusing a key gets the first caller's response.
 */
@RunAsClient
class GlobalScopeIT extends ClientOfOneDeployment {

    @Deployment
    static WebArchive deployment() {
        return Deployments.guardedApp("global-scope", Map.of("idempotency.scope", "global"));
    }

    @Test
    void callersShareOneKeySpace() {
        String key = Http.newKey();
        HttpResponse<String> alice = whoami("alice", key);
        HttpResponse<String> bob = whoami("bob", key);
        assertTrue(alice.body().contains("\"caller\":\"alice\""), alice.body());
        assertEquals(alice.body(), bob.body(), "bob is replayed alice's response");
        assertEquals("true", bob.headers().firstValue("Idempotent-Replayed").orElse(null));
    }

    private HttpResponse<String> whoami(String user, String key) {
        return http.postAs(user, "guarded/whoami", key);
    }
}
