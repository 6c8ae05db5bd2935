package io.idemkey.it;

import io.idemkey.testing.RedisMonitor;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@code idempotency.store=custom}: the application's own {@code IdempotencyStore} CDI bean (here
 * the seeds' check-then-lock pattern the benchmark compares against) is the one Idemkey uses.
 */
@RunAsClient
class CustomStoreIT extends ClientOfOneDeployment {

    @Deployment
    static WebArchive deployment() {
        return Deployments.guardedApp("custom-store", Map.of("idempotency.store", "custom",
                "idempotency.replay-cache-bytes", "0"));
    }

    @Test
    void theApplicationsStoreBeanKeepsTheRecords() throws Exception {
        String key = Http.newKey();
        try (RedisMonitor monitor = RedisMonitor.start(TestRedis.get())) {
            HttpResponse<String> first = http.postJson("guarded/echo", key, "{}");
            assertEquals(List.of("get", "set", "set"), monitor.takeClientCommands(), "check, then lock, then record");
            HttpResponse<String> replay = http.postJson("guarded/echo", key, "{}");
            assertEquals(List.of("get"), monitor.takeClientCommands());
            assertEquals(first.body(), replay.body());
            assertEquals("true", replay.headers().firstValue("Idempotent-Replayed").orElse(null));
        }
        assertEquals(1, http.executions(key));
    }
}
