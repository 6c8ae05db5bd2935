package io.idemkey.it;

import io.idemkey.it.observability.ApplicationOpenApiFilter;
import io.idemkey.metrics.PrometheusNames;
import jakarta.json.JsonObject;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.DisabledIfSystemProperty;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What monitoring systems and API portals see of the test application on this run's server:
 * conflicts and running requests in {@code /metrics}, and the guarded operations in {@code /openapi}
 * when the application has an OpenAPI filter of its own (one that extends Idemkey's).
 */
@RunAsClient
class ObservabilityIT extends ClientOfOneDeployment {

    private ServerDocuments documents;

    @Deployment
    static WebArchive deployment() {
        return Deployments.guardedApp("observability", Map.of("mp.openapi.filter", ApplicationOpenApiFilter.class.getName()))
                .addClass(ApplicationOpenApiFilter.class);
    }

    @BeforeEach
    void documents() throws Exception {
        documents = new ServerDocuments(base.toURI());
    }

    @Test
    @DisabledIfSystemProperty(named = "idemkey.server", matches = "wildfly",
            disabledReason = "WildFly has no MicroProfile Metrics (docs/servers-wildfly.md)")
    void runningRequestShowsInFlightAndItsRetryCountsAsAConflictOfItsEndpoint() throws Exception {
        String endpoint = "endpoint=\"POST /guarded/held\"";
        String before = documents.metrics();
        String key = Http.newKey();
        Http.Held first = http.hold(key); // until released: in progress while the metrics are read
        String during;
        try (first) {
            during = documents.metrics();
            assertEquals(409, http.post("guarded/held", key).statusCode());
        }
        assertEquals(200, first.answer().statusCode());
        assertTrue(ServerDocuments.value(during, "idempotency_in_flight") >= 1, during);
        await().atMost(Duration.ofSeconds(10)).until(() -> ServerDocuments.value(documents.metrics(), "idempotency_in_flight") == 0);
        String after = documents.metrics();
        assertEquals(1, ServerDocuments.value(after, "idempotency_conflict_total", endpoint)
                - ServerDocuments.value(before, "idempotency_conflict_total", endpoint), after);
        assertEquals(1, ServerDocuments.value(after, "idempotency_acquired_total", endpoint)
                - ServerDocuments.value(before, "idempotency_acquired_total", endpoint));
    }

    /**
     * The names docs/monitoring's alert rules and dashboard read (AlertRulesTest and DashboardTest
     * hold them to {@link PrometheusNames}) are what this server writes: every Idemkey series on
     * {@code /metrics} is one of them, and the timer's and the gauge's forms are there.
     */
    @Test
    @DisabledIfSystemProperty(named = "idemkey.server", matches = "wildfly",
            disabledReason = "WildFly has no MicroProfile Metrics: the rules and dashboard read Payara's and Liberty's names")
    void serverWritesIdemkeysSeriesUnderTheNamesTheAlertsAndDashboardRead() {
        assertEquals(200, http.post("guarded/slow?millis=1", Http.newKey()).statusCode());
        String metrics = documents.metrics();
        Set<String> seen = new TreeSet<>();
        Matcher series = Pattern.compile("(?m)^(idempotency_\\w+)[{ ]").matcher(metrics);
        while (series.find()) {
            seen.add(series.group(1));
        }
        Set<String> unknown = new TreeSet<>(seen);
        unknown.removeAll(PrometheusNames.exported());
        assertEquals(Set.of(), unknown, "series the alerts and dashboard do not know by these names:\n" + metrics);
        for (String name : List.of("idempotency_acquired_total", "idempotency_completed_total", "idempotency_in_flight",
                "idempotency_store_latency_seconds_count", "idempotency_store_latency_seconds_sum",
                "idempotency_store_latency_seconds_max")) {
            assertTrue(seen.contains(name), name + " not on /metrics:\n" + metrics);
        }
    }

    /**
     * The store's readiness check is in the server's MicroProfile Health document (WildFly serves it
     * on its management port), with the background threads on the server's managed thread factory.
     */
    @Test
    void theStoresReadinessCheckIsInTheServersHealthDocument() {
        String managementPort = System.getProperty("wildfly.managementPort");
        Http health = "wildfly".equals(System.getProperty("idemkey.server"))
                ? new Http(URI.create("http://127.0.0.1:" + managementPort + "/")) : http;
        JsonObject check = health.storeCheck(200);
        assertEquals("UP", check.getString("status"));
        assertEquals("redis", check.getJsonObject("data").getString("store"));
        assertEquals("managed threads", check.getJsonObject("data").getString("lease-renewal"),
                "Idemkey's background pool runs on threads of the server's managed thread factory");
    }

    @Test
    void applicationsOwnOpenApiFilterThatExtendsIdemkeysKeepsBothContributions() {
        JsonObject document = documents.openApi();
        JsonObject echo = ServerDocuments.operation(document, "/guarded/echo", "post");
        assertEquals("ran", echo.getString("x-application-filter"), "the application's filter ran");
        JsonObject key = ServerDocuments.headerParameter(echo, "Idempotency-Key");
        assertNotNull(key, "and Idemkey's documentation is there: " + echo);
        assertTrue(key.getBoolean("required"));
        assertEquals("PT24H", echo.getJsonObject("x-idempotency").getString("replay-window"));

        JsonObject optional = ServerDocuments.operation(document, "/guarded/optional", "post");
        assertEquals(false, ServerDocuments.headerParameter(optional, "Idempotency-Key").getBoolean("required"));
        assertNull(ServerDocuments.headerParameter(ServerDocuments.operation(document, "/class-level", "get"),
                "Idempotency-Key"), "GET is not guarded, even in a guarded class");
        assertNotNull(ServerDocuments.headerParameter(ServerDocuments.operation(document, "/contracts/interface/charge",
                "post"), "Idempotency-Key"), "an interface placement is documented too");
    }
}
