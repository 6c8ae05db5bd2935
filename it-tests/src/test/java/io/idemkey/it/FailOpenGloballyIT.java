package io.idemkey.it;

import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@code idempotency.failure-mode=open} for the whole application, with no Redis to be reached:
 * guarded methods run unprotected (counted), except an endpoint whose annotation says closed.
 */
@RunAsClient
class FailOpenGloballyIT extends ClientOfOneDeployment {

    @Deployment
    static WebArchive deployment() {
        return Deployments.guardedApp("fail-open-globally", Map.of("idempotency.failure-mode", "open",
                "idempotency.redis.url", Deployments.UNREACHABLE_REDIS));
    }

    @Test
    void withoutRedisMethodsRunUnprotectedAndCountIt() {
        String key = Http.newKey();
        long failOpen = http.metric("idempotency.fail.open");
        assertEquals(201, http.postJson("guarded/echo", key, "{}").statusCode());
        assertEquals(201, http.postJson("guarded/echo", key, "{}").statusCode());
        assertEquals(2, http.executions(key), "unprotected: the retry ran too");
        assertEquals(failOpen + 2, http.metric("idempotency.fail.open"));
    }

    @Test
    void anEndpointAnnotatedFailClosedStillAnswers503() {
        String key = Http.newKey();
        assertEquals(503, http.postJson("guarded/payments", key, "{\"name\":\"n\",\"amount\":1}").statusCode());
        assertEquals(0, http.executions(key));
    }
}
