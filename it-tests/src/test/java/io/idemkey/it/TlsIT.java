package io.idemkey.it;

import io.idemkey.testing.TlsRedis;
import org.jboss.shrinkwrap.api.exporter.ZipExporter;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Idemkey on a server of this run, talking to Redis over TLS ({@code rediss://}, a certificate
 * authority the test makes) as an ACL user, with the credentials in the URL or in their own keys;
 * and with a wrong password. No secret ever appears in the server's log.
 */
class TlsIT {

    private static final String PASSWORD = "Tls-s3cret-" + Http.newKey().substring(0, 8);
    private static final String WRONG_PASSWORD = "Wr0ng-s3cret-" + Http.newKey().substring(0, 8);

    private static TlsRedis redis;
    private static ServerProcess server;

    @BeforeAll
    static void start() throws Exception {
        redis = TlsRedis.start("idemkey", PASSWORD);
        Path directory = Files.createTempDirectory("idemkey-tls-wars");
        server = ServerProcess.startForTests(ServerProcess.Kind.ofThisRun(), List.of(
                export(directory, "tls-url", Map.of(
                        "idempotency.redis.url", "rediss://idemkey:" + PASSWORD + "@127.0.0.1:" + redis.tlsPort())),
                export(directory, "tls-keys", Map.of("idempotency.redis.user", "idemkey",
                        "idempotency.redis.password", PASSWORD)),
                export(directory, "tls-wrong", Map.of("idempotency.redis.user", "idemkey",
                        "idempotency.redis.password", WRONG_PASSWORD))));
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
        if (redis != null) {
            redis.close();
        }
    }

    @Test
    void credentialsInTheUrlOverTls() {
        assertRecordedAndReplayed("tls-url");
    }

    @Test
    void credentialsInTheirOwnKeysOverTls() {
        assertRecordedAndReplayed("tls-keys");
    }

    @Test
    void aWrongPasswordFailsTheDeploymentNamingThePropertyAndNoSecretReachesTheLog() {
        Http http = new Http(server.uri("tls-wrong"));
        String key = Http.newKey();
        assertEquals(404, http.postJson("guarded/payments", key, "{\"name\":\"n\"}").statusCode(),
                "a refused password is a configuration error: the application is not deployed");
        assertRecordedAndReplayed("tls-url"); // the others keep working, and log as they do
        String log = server.log();
        assertTrue(log.contains("Invalid Idemkey configuration: idempotency.redis.user"), "the deployment error names the"
                + " property: " + server.logFile());
        for (String secret : List.of(PASSWORD, WRONG_PASSWORD, TlsRedis.TRUSTSTORE_PASSWORD)) {
            assertFalse(log.contains(secret), "the server log shows a secret");
        }
    }

    private static void assertRecordedAndReplayed(String context) {
        Http http = new Http(server.uri(context));
        String key = Http.newKey();
        HttpResponse<String> first = http.postJson("guarded/payments", key, "{\"name\":\"n\"}");
        HttpResponse<String> retry = http.postJson("guarded/payments", key, "{\"name\":\"n\"}");
        assertEquals(201, first.statusCode(), context + ": " + first.body());
        assertEquals(first.body(), retry.body());
        assertEquals("true", retry.headers().firstValue("Idempotent-Replayed").orElse(null));
        assertEquals(1, http.executions(key));
    }

    private static Path export(Path directory, String name, Map<String, String> credentials) {
        Map<String, String> config = new HashMap<>(credentials);
        config.putIfAbsent("idempotency.redis.url", redis.url());
        config.put("idempotency.redis.tls.truststore", redis.truststore().toString());
        config.put("idempotency.redis.tls.truststore-password", TlsRedis.TRUSTSTORE_PASSWORD);
        config.put("idempotency.redis.tls.truststore-type", "PKCS12");
        WebArchive war = Deployments.guardedApp(name, config);
        Path file = directory.resolve(name + ".war");
        war.as(ZipExporter.class).exportTo(file.toFile(), true);
        return file;
    }
}
