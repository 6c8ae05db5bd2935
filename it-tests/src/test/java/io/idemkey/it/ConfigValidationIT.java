package io.idemkey.it;

import io.idemkey.store.redis.RedisIdempotencyStore;
import io.idemkey.testing.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import redis.clients.jedis.Jedis;
import redis.clients.jedis.Protocol;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/**
 * Bad configuration fails the deployment with a message that names the property, and never shows a
 * password. Payara Micro's Arquillian container reports every deployment as a success, so this test
 * starts the server of this run itself with applications: one sound, the others misconfigured.
 */
class ConfigValidationIT {

    private static ServerProcess server;
    /** 16 bytes, base64: AES-128's size, not the 32 bytes idempotency.encryption.keys needs. */
    private static final String SHORT_KEY = "c2l4dGVlbi1ieXRlcy1rZQ==";
    private static final String ACL_PASSWORD = "acl-it-password";

    @BeforeAll
    static void deploy() throws IOException {
        Path directory = Files.createTempDirectory("idemkey-config-validation");
        List<String> rule = Arrays.asList(RedisIdempotencyStore.aclRule("idempotency:").split(" +"));
        setUser(TestRedis.get(), "idemkey-it", rule);
        setUser(TestRedis.get(), "idemkey-it-no-incr", rule.stream().filter(word -> !word.equals("+incr")).toList());
        // The sound application comes first: Payara Micro stops initializing the applications that
        // follow one whose initialization failed.
        server = ServerProcess.startForTests(ServerProcess.Kind.ofThisRun(), List.of(
                Deployments.export(directory, Deployments.guardedApp("sound", Map.of())),
                Deployments.export(directory, Deployments.guardedApp("acl-user", Map.of(
                        "idempotency.redis.user", "idemkey-it", "idempotency.redis.password", ACL_PASSWORD,
                        "idempotency.rate-limit.per-key", "2/1m"))),
                Deployments.export(directory, Deployments.guardedApp("malformed-redis-url", Map.of(
                        "idempotency.redis.url", "http://user:hunter2@localhost:6379"))),
                Deployments.export(directory, Deployments.guardedApp("lock-longer-than-ttl", Map.of(
                        "io.idemkey.it.app.GuardedResource/echo/IdempotencyKey/lockTtlSeconds", "86400",
                        "io.idemkey.it.app.GuardedResource/echo/IdempotencyKey/ttlHours", "1"))),
                Deployments.export(directory, Deployments.guardedApp("call-without-lock-ttl", Map.of(
                        "io.idemkey.it.app.IdempotentPayments/Idempotent/lockTtlSeconds", "0"))),
                Deployments.export(directory, Deployments.guardedApp("client-without-attempts", Map.of(
                        "idempotency.client.max-attempts", "0"))),
                Deployments.export(directory, Deployments.guardedApp("short-encryption-key", Map.of(
                        "idempotency.encryption.keys", "it:" + SHORT_KEY,
                        "idempotency.encryption.identifier-key", SHORT_KEY + SHORT_KEY))),
                Deployments.export(directory, Deployments.guardedApp("acl-user-without-incr", Map.of(
                        "idempotency.redis.user", "idemkey-it-no-incr", "idempotency.redis.password", ACL_PASSWORD,
                        "idempotency.rate-limit.per-key", "2/1m"))),
                Deployments.export(directory, Deployments.guardedApp("encryption-required-without-keys", Map.of(
                        "idempotency.encryption.required", "true", "idempotency.encryption.keys", " ")))));
    }

    /** {@code ACL SETUSER <name> reset on ><password> <rule...>} on {@code redis}. */
    private static void setUser(RedisServer redis, String name, List<String> rule) {
        List<String> arguments = new ArrayList<>(List.of("SETUSER", name, "reset", "on", ">" + ACL_PASSWORD));
        arguments.addAll(rule);
        try (Jedis jedis = redis.client()) {
            jedis.sendCommand(Protocol.Command.ACL, arguments.toArray(String[]::new));
        }
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void lockTtlLongerThanTheRecordTtlFailsTheDeploymentNamingTheProperty() throws Exception {
        assertTrue(server.log().contains("Invalid Idemkey configuration: "
                + "io.idemkey.it.app.GuardedResource/echo/IdempotencyKey/lockTtlSeconds (86400 s) must be shorter than"
                + " io.idemkey.it.app.GuardedResource/echo/IdempotencyKey/ttlHours (1 h)"), server.log());
        assertEquals(404, status("lock-longer-than-ttl", "guarded/executions?key=x"), "the application is not serving");
    }

    @Test
    void anIdempotentMethodsInvalidOverrideFailsTheDeploymentNamingTheProperty() throws Exception {
        assertTrue(server.log().contains("Invalid Idemkey configuration: "
                + "io.idemkey.it.app.IdempotentPayments/Idempotent/lockTtlSeconds"), server.log());
        assertEquals(404, status("call-without-lock-ttl", "guarded/executions?key=x"), "the application is not serving");
    }

    @Test
    void anInvalidClientRetrySettingFailsTheDeploymentNamingTheProperty() throws Exception {
        assertTrue(server.log().contains("Invalid Idemkey configuration: idempotency.client.max-attempts must be between 1"
                + " and 100, not 0"), server.log());
        assertEquals(404, status("client-without-attempts", "guarded/executions?key=x"), "the application is not serving");
    }

    @Test
    void malformedRedisUrlFailsTheDeploymentWithoutShowingThePassword() throws Exception {
        assertTrue(server.log().contains("Invalid Idemkey configuration: idempotency.redis.url is not a valid Redis URL"),
                server.log());
        assertFalse(server.log().contains("hunter2"), "the password never reaches the log");
        assertEquals(404, status("malformed-redis-url", "guarded/executions?key=x"), "the application is not serving");
    }

    @Test
    void anEncryptionKeyOfTheWrongLengthFailsTheDeploymentNamingThePropertyWithoutShowingTheKey() throws Exception {
        assertTrue(server.log().contains("Invalid Idemkey configuration: idempotency.encryption.keys is invalid: the key"
                + " 'it' has 16 bytes; AES-256 needs exactly 32"), server.log());
        assertFalse(server.log().contains(SHORT_KEY), "the key never reaches the log");
        assertEquals(404, status("short-encryption-key", "guarded/executions?key=x"), "the application is not serving");
    }

    /** The application connects as the user docs/security.md describes: the start-up check passes, the rate limit counts. */
    @Test
    void anApplicationWhoseRedisUserHasTheDocumentedRuleServes() throws Exception {
        Http http = new Http(server.uri("acl-user"));
        String key = Http.newKey();
        HttpResponse<String> first = http.postJson("guarded/echo", key, "{}");
        assertTrue(first.statusCode() < 300, first.statusCode() + " " + first.body());
        HttpResponse<String> replay = http.postJson("guarded/echo", key, "{}");
        assertEquals(first.body(), replay.body());
        assertEquals("true", replay.headers().firstValue("Idempotent-Replayed").orElse(null));
        assertEquals(429, http.postJson("guarded/echo", key, "{}").statusCode(), "the third request of 2/1m");
        assertFalse(server.log().contains("store-access-denied"), server.log());
    }

    @Test
    void aRedisUserWithoutAPermissionFailsTheDeploymentNamingWhatRedisRefused() throws Exception {
        assertTrue(server.log().contains("Invalid Idemkey configuration: idempotency.redis.user"), server.log());
        assertTrue(server.log().contains("of the commands the record script calls, Redis refuses INCR"), server.log());
        assertFalse(server.log().contains(ACL_PASSWORD), "the password never reaches the log");
        assertNotEquals(200, status("acl-user-without-incr", "guarded/executions?key=x"), "the application is not serving");
    }

    @Test
    void requiredEncryptionWithABlankKeySettingFailsTheDeploymentNamingTheProperty() throws Exception {
        assertTrue(server.log().contains("Invalid Idemkey configuration: idempotency.encryption.keys is not set or blank,"
                + " but idempotency.encryption.required=true"), server.log());
        assertEquals(404, status("encryption-required-without-keys", "guarded/executions?key=x"), "the application is not serving");
    }

    @Test
    void soundApplicationOnTheSameServerServes() throws Exception {
        assertEquals(200, status("sound", "guarded/executions?key=x"));
    }

    private static int status(String context, String path) throws Exception {
        HttpResponse<Void> response = HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(server.uri(context).resolve(path)).GET().build(),
                HttpResponse.BodyHandlers.discarding());
        return response.statusCode();
    }
}
