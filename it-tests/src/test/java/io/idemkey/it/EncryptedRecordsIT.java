package io.idemkey.it;

import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Records encrypted at rest on a real server (issue 28): with {@code idempotency.encryption.keys} and
 * {@code identifier-key} deployed, replays work, and every key and value this deployment left in
 * Redis holds neither the response (its id, its Location) nor the client's key nor the caller.
 */
@RunAsClient
class EncryptedRecordsIT extends ClientOfOneDeployment {

    private static final String PREFIX = "sealed-it:";

    @Deployment
    static WebArchive deployment() {
        return Deployments.guardedApp("encrypted-records", Map.of(
                "idempotency.key-prefix", PREFIX,
                "idempotency.replay-cache-bytes", "0",
                "idempotency.encryption.keys", "it2:" + key(2) + ",it1:" + key(1),
                "idempotency.encryption.identifier-key", key(3)));
    }

    private static String key(int seed) {
        byte[] key = new byte[32];
        java.util.Arrays.fill(key, (byte) seed);
        return Base64.getEncoder().encodeToString(key);
    }

    @Test
    void redisHoldsNoResponseKeyOrCallerAndReplaysWork() {
        String key = "secret-" + Http.newKey();
        HttpResponse<String> first = echo("alice", key);
        assertEquals(201, first.statusCode(), first.body());
        String id = Http.json(first).getString("id");
        HttpResponse<String> replay = echo("alice", key);
        assertEquals(first.body(), replay.body());
        assertEquals("true", replay.headers().firstValue("Idempotent-Replayed").orElse(null));
        assertEquals(first.headers().firstValue("Location"), replay.headers().firstValue("Location"));
        assertEquals(201, echo("bob", key).statusCode(), "bob's own record, not alice's");

        List<byte[]> stored = new ArrayList<>();
        try (Jedis redis = TestRedis.get().client()) {
            Set<byte[]> keys = redis.keys((PREFIX + "*").getBytes(StandardCharsets.UTF_8));
            assertEquals(2, keys.size(), "alice's and bob's records");
            for (byte[] k : keys) {
                assertTrue(new String(k, StandardCharsets.UTF_8).startsWith(PREFIX + "h="));
                stored.add(k);
                stored.add(redis.get(k));
            }
        }
        for (String needle : List.of(id, key, "alice", "bob", "/things/")) {
            for (byte[] bytes : stored) {
                assertFalse(new String(bytes, StandardCharsets.ISO_8859_1).contains(needle), needle + " readable in Redis");
            }
        }
    }

    private HttpResponse<String> echo(String user, String key) {
        return http.send(http.request("guarded/echo", user).header(Http.KEY, key)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"card\":\"4111111111111111\"}")).build());
    }
}
