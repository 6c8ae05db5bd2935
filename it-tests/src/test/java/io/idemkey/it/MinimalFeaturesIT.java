package io.idemkey.it;

import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.http.HttpRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The status table on an Open Liberty with exactly the features docs/servers.md documents as Idemkey's
 * needs, and nothing else: no servlet, health, metrics, telemetry, OpenAPI, security or bean
 * validation. The test servers enable more; this one proves none of it is needed. (Run in the Open
 * Liberty execution only.)
 */
class MinimalFeaturesIT extends StatusTableTests {

    /** docs/servers.md's list (section Servers), word for word. */
    static final List<String> MINIMAL_FEATURES =
            List.of("restfulWS-3.1", "cdi-4.0", "jsonb-3.0", "jsonp-2.1", "mpConfig-3.1", "concurrent-3.0");

    private static ServerProcess server;

    @BeforeAll
    static void start() throws IOException {
        Path directory = Files.createTempDirectory("idemkey-minimal");
        WebArchive war = deployment(Map.of())
                .deleteClass(io.idemkey.it.app.TestSecurity.class); // Jakarta Security is not on this server
        server = LibertyServer.startWithExactly(MINIMAL_FEATURES, List.of(Deployments.export(directory, war)),
                ServerProcess.freePort());
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    @BeforeEach
    void client() {
        http = new Http(server.uri(CONTEXT));
    }

    @Override
    boolean validatesBeans() {
        return false;
    }

    @Test
    void serverRunsExactlyTheMinimalFeaturesAndIdemkeyStartedWithoutAnError() {
        String log = server.log();
        assertTrue(log.contains("Idemkey started"), log);
        for (String absent : List.of("servlet-6.0", "mpHealth", "mpMetrics", "mpOpenAPI", "mpTelemetry", "appSecurity",
                "beanValidation")) {
            assertFalse(log.matches("(?s).*CWWKF0012I: The server installed the following features: \\[[^\\]]*"
                    + absent + ".*"), absent + " must not be installed: " + log);
        }
        assertFalse(log.contains("WELD-001408"), "no unsatisfied dependency");
        assertFalse(log.contains("CWWKZ0002E"), "the application started");
    }

    /** {@code @Idempotent} methods and the programmatic form need nothing more either (no JTA here). */
    @Test
    void idempotentMethodsRunOnceOnTheMinimalFeatures() {
        String id = Http.newKey();
        for (String path : List.of("calls/charge/" + id, "calls/programmatic/" + id)) {
            String first = http.send(http.request(path).POST(HttpRequest.BodyPublishers.noBody()).build()).body();
            assertTrue(first.startsWith("returned Receipt [{\"cents\":100"), first);
            assertEquals(first, http.send(http.request(path).POST(HttpRequest.BodyPublishers.noBody()).build()).body());
        }
        assertEquals("1", http.get("calls/runs?name=" + Http.query("charge:" + id)).body().trim());
        assertEquals("1", http.get("calls/runs?name=" + Http.query("programmatic:" + id)).body().trim());
    }
}
