package io.idemkey.it;

import org.jboss.shrinkwrap.api.exporter.ZipExporter;
import org.junit.jupiter.api.Test;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A server is killed ({@code kill -9}) while a guarded request runs. After it restarts, a retry
 * within lockTtlSeconds is refused with 409 (the dead request's lease still holds the key), and once
 * the lease has run out the retry runs, exactly once.
 */
class CrashIT {

    private static final int LOCK_TTL_SECONDS = 40; // a restart on a loaded 2-core machine has taken 25 s

    @Test
    void serverKilledMidRequestRestartsAndTheRetryRunsOnceAfterTheLease() throws Exception {
        Path war = Files.createTempDirectory("idemkey-crash").resolve("crash.war");
        Deployments.guardedApp("crash", Map.of(
                "io.idemkey.it.app.GuardedResource/crashable/IdempotencyKey/lockTtlSeconds",
                Integer.toString(LOCK_TTL_SECONDS))).as(ZipExporter.class).exportTo(war.toFile(), true);
        ServerProcess.Kind kind = ServerProcess.Kind.ofThisRun();
        int port = ServerProcess.freePort();
        String key = Http.newKey();

        long killedAt;
        try (ServerProcess first = ServerProcess.startForTests(kind, List.of(war), port)) {
            Http http = new Http(first.uri("crash"));
            CompletableFuture.runAsync(() -> {
                try {
                    http.send(http.request("guarded/crashable").header(Http.KEY, key).header("X-Sleep-Millis", "120000")
                            .POST(HttpRequest.BodyPublishers.noBody()).build());
                } catch (RuntimeException connectionDropped) {
                    // expected: the server dies under the request
                }
            });
            http.awaitExecution(key);
            first.kill();
            killedAt = System.nanoTime();
        }

        try (ServerProcess restarted = ServerProcess.startForTests(kind, List.of(war), port)) {
            Http http = new Http(restarted.uri("crash"));
            HttpResponse<String> retry = http.post("guarded/crashable", key);
            long secondsSinceKill = Duration.ofNanos(System.nanoTime() - killedAt).toSeconds();
            assertTrue(secondsSinceKill < LOCK_TTL_SECONDS - 10, "the restart took " + secondsSinceKill + " s: too long to test");
            assertEquals(409, retry.statusCode(), "within lockTtlSeconds the dead request still holds the key");

            long deadline = System.nanoTime() + Duration.ofSeconds(LOCK_TTL_SECONDS + 10).toNanos();
            while (retry.statusCode() == 409) {
                assertTrue(System.nanoTime() < deadline, "the dead request's lease never ran out");
                Thread.sleep(250);
                retry = http.post("guarded/crashable", key);
            }
            assertEquals(200, retry.statusCode());
            assertEquals(1, http.executions(key), "the retry ran exactly once");
            HttpResponse<String> replay = http.post("guarded/crashable", key);
            assertEquals(retry.body(), replay.body());
            assertEquals("true", replay.headers().firstValue("Idempotent-Replayed").orElse(null));
            assertEquals(1, http.executions(key));
        }
    }

}
