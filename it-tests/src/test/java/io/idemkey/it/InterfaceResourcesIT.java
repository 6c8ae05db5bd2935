package io.idemkey.it;

import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.http.HttpResponse;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Resources whose JAX-RS annotations come from a shared interface are guarded wherever
 * {@code @IdempotencyKey} sits: on the implementing method, on the interface's method, on the
 * interface. Each placement gets the filters (400 without a key, replays) and the CDI interceptor,
 * whose work shows in {@code IdempotencyContext} (a key, and an outcome marked retryable releases it).
 */
@RunAsClient
class InterfaceResourcesIT extends ClientOfOneDeployment {

    @Deployment
    static WebArchive deployment() {
        return Deployments.guardedApp("interface-resources", Map.of());
    }

    @ParameterizedTest
    @ValueSource(strings = {"implementation", "interface-method", "interface"})
    void requestWithoutAKeyIsRefused(String placement) {
        HttpResponse<String> response = http.postJson("contracts/" + placement + "/charge", null, "{}");
        assertEquals(400, response.statusCode(), placement + ": " + response.body());
    }

    @ParameterizedTest
    @ValueSource(strings = {"implementation", "interface-method", "interface"})
    void retryIsReplayedAndTheMethodRanOnce(String placement) {
        String key = Http.newKey();
        HttpResponse<String> first = http.postJson("contracts/" + placement + "/charge", key, "{\"amount\":1}");
        HttpResponse<String> retry = http.postJson("contracts/" + placement + "/charge", key, "{ \"amount\" : 1 }");
        assertEquals(200, first.statusCode(), first.body());
        assertEquals(first.body(), retry.body());
        assertEquals("true", retry.headers().firstValue("Idempotent-Replayed").orElse(null));
        assertEquals(1, http.executions(placement + ":" + key), "the method saw its key through IdempotencyContext");
        assertEquals(422, http.postJson("contracts/" + placement + "/charge", key, "{\"amount\":2}").statusCode());
    }

    @ParameterizedTest
    @ValueSource(strings = {"implementation", "interface-method", "interface"})
    void outcomeMarkedRetryableReleasesTheKeyBecauseTheInterceptorRan(String placement) {
        String key = Http.newKey();
        HttpResponse<String> first = http.postJson("contracts/" + placement + "/charge?retryable=true", key, "{}");
        HttpResponse<String> retry = http.postJson("contracts/" + placement + "/charge?retryable=true", key, "{}");
        assertEquals(200, retry.statusCode());
        assertEquals(Optional.empty(), retry.headers().firstValue("Idempotent-Replayed"), retry.body());
        assertEquals(2, http.executions(placement + ":" + key), first.body() + " / " + retry.body());
    }
}
