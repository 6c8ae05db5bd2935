package io.idemkey.it;

import org.jboss.shrinkwrap.api.exporter.ZipExporter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The mixed pair: a WildFly (its {@code standalone-microprofile.xml} plus the Micrometer subsystem
 * with a Prometheus registry, added with {@code jboss-cli} as docs/servers-wildfly.md shows) and a
 * Payara Micro 7 (Jakarta EE 11, on its JDK 21+) on one Redis, the same application unchanged on
 * both; and Idemkey's counters in WildFly's Micrometer registry, on its management port's
 * {@code /prometheus}. (Starts both servers itself, beside the WildFly execution's Arquillian-managed
 * one; the Payara Micro 6 + Open Liberty pair is {@link TwoServersIT}.)
 */
class WildFlyTwoServersIT extends TwoServersTests {

    /** What docs/servers-wildfly.md tells WildFly's users to run for metrics. */
    static final List<String> MICROMETER_PROMETHEUS = List.of(
            "/extension=org.wildfly.extension.micrometer:add",
            "/subsystem=micrometer:add",
            "/subsystem=micrometer/registry=prometheus:add(context=/prometheus, security-enabled=false)",
            "reload");

    private static ServerProcess payara;
    private static WildFlyServer wildfly;

    @BeforeAll
    static void start() throws Exception {
        // -Dit.skip.payara7Server=true: no Payara 7 jar copied, no JDK 21+ checked: the pair is skipped, said as such
        Assumptions.assumeFalse(Boolean.getBoolean("idemkey.test.payara7Skipped"),
                "Payara Micro 7 left out (-Dit.skip.payara7Server=true): no WildFly + Payara Micro 7 pair");
        Path war = Files.createTempDirectory("idemkey-two-servers").resolve("shared.war");
        Deployments.guardedApp("shared", onALongLease(Map.of())).as(ZipExporter.class).exportTo(war.toFile(), true);
        CompletableFuture<ServerProcess> startingPayara = CompletableFuture.supplyAsync(() ->
                PayaraMicroServer.startPayara7(List.of(war), ServerProcess.freePort()));
        try {
            wildfly = WildFlyServer.start(List.of(war), ServerProcess.freePort(), Map.of(), MICROMETER_PROMETHEUS);
        } finally {
            payara = startingPayara.get();
        }
        warmUp(payara, wildfly);
    }

    @AfterAll
    static void stop() {
        if (payara != null) {
            payara.close();
        }
        if (wildfly != null) {
            wildfly.close();
        }
    }

    @Override
    ServerProcess payara() {
        return payara;
    }

    @Override
    ServerProcess other() {
        return wildfly;
    }

    @Override
    StatusTableTests.StoreCalls countStoreCalls() {
        return StatusTableTests.redisCalls();
    }

    /**
     * A first request, its replay and a conflicting retry on WildFly are counted in its Micrometer
     * registry under Idemkey's names, with the endpoint; the store's latency and the running
     * requests are there too.
     */
    @Test
    void idemkeysCountersAreInWildFlysMicrometerPrometheusEndpoint() throws Exception {
        Http http = new Http(wildfly.uri("shared"));
        String endpoint = "endpoint=\"POST /guarded/held\"";
        String before = prometheus();
        String key = Http.newKey();
        Http.Held first = http.hold(key);
        try (first) {
            assertEquals(409, http.post("guarded/held", key).statusCode());
        }
        assertEquals(200, first.answer().statusCode());
        assertEquals("true", http.post("guarded/held", key).headers().firstValue("Idempotent-Replayed").orElse(null));
        String[] after = new String[1];
        await().atMost(Duration.ofSeconds(10)).until(() -> ServerDocuments.value(after[0] = prometheus(),
                "idempotency_replayed_total", endpoint) - ServerDocuments.value(before, "idempotency_replayed_total", endpoint) == 1);
        for (String counter : List.of("idempotency_acquired_total", "idempotency_conflict_total", "idempotency_completed_total")) {
            assertEquals(1, ServerDocuments.value(after[0], counter, endpoint) - ServerDocuments.value(before, counter, endpoint),
                    counter + ":\n" + after[0]);
        }
        assertTrue(ServerDocuments.value(after[0], "idempotency_store_latency_seconds_count", "operation=\"acquire\"") >= 1, after[0]);
        assertTrue(after[0].matches("(?s).*\\nidempotency_in_flight[{ ].*"), after[0]);
    }

    private static String prometheus() throws Exception {
        HttpResponse<String> response = HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(wildfly.management("/prometheus")).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode(), response.body());
        return response.body();
    }
}
