package io.idemkey.it;

import io.idemkey.it.observability.ApplicationOpenApiFilter;
import jakarta.json.JsonObject;
import jakarta.json.JsonValue;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Open Liberty with MicroProfile 7's features ({@code mpOpenAPI-4.0}, {@code mpHealth-4.0},
 * {@code mpConfig-3.1}, plus {@code mpMetrics-5.1}, which MicroProfile 7 no longer bundles) on the
 * Jakarta EE 10 features: the newest the Open Liberty runtime on Maven Central offers (26.0.0.3 has
 * no {@code restfulWS-4.0}, {@code cdi-4.1} nor any other Jakarta EE 11 feature; docs/servers.md).
 * MicroProfile OpenAPI 4 changed {@code Schema}'s type setter: an OpenAPI filter that calls the 3.x
 * one fails inside the server's OpenAPI build and the whole {@code /openapi} documents nothing of
 * the application. This proves the application's whole document and Idemkey's additions are there,
 * and that the counters and the store's readiness check are published. (Open Liberty execution only.)
 */
class LibertyMicroProfile7IT {

    /** docs/servers.md's MicroProfile 7 list: Idemkey's needs, then the MicroProfile 7 features it uses. */
    static final List<String> FEATURES = List.of("restfulWS-3.1", "cdi-4.0", "jsonb-3.0", "jsonp-2.1", "concurrent-3.0",
            "mpConfig-3.1", "mpOpenAPI-4.0", "mpHealth-4.0", "mpMetrics-5.1");

    private static final String CONTEXT = "microprofile7";

    private static ServerProcess server;

    private Http http;
    private ServerDocuments documents;

    @BeforeAll
    static void start() throws IOException {
        Path directory = Files.createTempDirectory("idemkey-mp7");
        WebArchive war = Deployments.guardedApp(CONTEXT, Map.of("mp.openapi.filter", ApplicationOpenApiFilter.class.getName()))
                .addClass(ApplicationOpenApiFilter.class)
                .deleteClass(io.idemkey.it.app.TestSecurity.class); // Jakarta Security is not on this server
        server = LibertyServer.startWithExactly(FEATURES, "<mpMetrics authentication=\"false\"/>",
                List.of(Deployments.export(directory, war)), ServerProcess.freePort());
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    @BeforeEach
    void client() throws Exception {
        http = new Http(server.uri(CONTEXT));
        documents = new ServerDocuments(server.uri(CONTEXT));
    }

    @Test
    void serverRunsMicroProfile7sFeaturesAndIdemkeyStarted() {
        String log = server.log();
        for (String feature : List.of("mpOpenAPI-4.0", "mpHealth-4.0", "mpMetrics-5.1", "mpConfig-3.1")) {
            assertTrue(log.matches("(?s).*CWWKF0012I: The server installed the following features: \\[[^\\]]*"
                    + feature.replace(".", "\\.") + ".*"), feature + " installed: " + log);
        }
        assertTrue(log.contains("Idemkey started"), log);
        assertFalse(log.contains("CWWKZ0002E"), "the application started");
    }

    @Test
    void wholeOpenApiDocumentHasTheApplicationsOperationsAndIdemkeysAdditions() {
        JsonObject document = documents.openApi();
        assertTrue(document.getString("openapi", "").startsWith("3.1"), "MicroProfile OpenAPI 4 writes OpenAPI 3.1: "
                + document.getString("openapi", ""));
        JsonObject echo = ServerDocuments.operation(document, "/guarded/echo", "post");
        assertEquals("ran", echo.getString("x-application-filter"), "the application's filter ran");
        JsonObject key = ServerDocuments.headerParameter(echo, "Idempotency-Key");
        assertNotNull(key, "Idemkey's documentation is there: " + echo);
        assertTrue(key.getBoolean("required"));
        JsonValue type = key.getJsonObject("schema").get("type");
        assertNotNull(type, "Idemkey's schema has its type on OpenAPI 4 too: " + key);
        assertTrue(type.toString().contains("\"string\""), "a string: " + type);
        assertEquals("PT24H", echo.getJsonObject("x-idempotency").getString("replay-window"));
        assertNull(ServerDocuments.headerParameter(ServerDocuments.operation(document, "/class-level", "get"),
                "Idempotency-Key"), "the application's unguarded operations are documented too, without the header");
        assertNotNull(ServerDocuments.operation(document, "/calls/runs", "get"), "and every other resource of it");
        assertFalse(server.log().contains("NoSuchMethodError"), "no linkage error in the server's OpenAPI build");
    }

    @Test
    void countersAndTheStoresReadinessCheckArePublished() {
        String key = Http.newKey();
        assertEquals(201, http.postJson("guarded/echo", key, "{\"n\":1}").statusCode());
        assertEquals(201, http.postJson("guarded/echo", key, "{\"n\":1}").statusCode());
        String metrics = documents.metrics();
        assertTrue(ServerDocuments.value(metrics, "idempotency_acquired_total", "endpoint=\"POST /guarded/echo\"") >= 1,
                metrics);
        assertTrue(ServerDocuments.value(metrics, "idempotency_replayed_total") >= 1, metrics);
        assertEquals("UP", http.storeCheck(200).getString("status"));
    }
}
