package io.idemkey.it;

import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.jboss.shrinkwrap.resolver.api.maven.Maven;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * With MicroProfile Telemetry on, the request's span carries Idemkey's decision
 * ({@code idempotency.decision}) and whether the answer is a replay ({@code idempotency.replayed}).
 * Spans are exported by OpenTelemetry's logging exporter into the server's log, where the test
 * reads them. Open Liberty: {@code mpTelemetry-2.0}, the application with third-party APIs visible;
 * Payara Micro: its built-in OpenTelemetry, with the logging exporter in the WAR; WildFly: the stock
 * {@code standalone-microprofile.xml} (its {@code opentelemetry} and {@code microprofile-telemetry}
 * subsystems, MicroProfile Telemetry 2), switched on for the application by its own
 * {@code otel.sdk.disabled=false}, the exporter chosen there too (WildFly's module has the logging one).
 */
class TelemetryIT {

    private static ServerProcess server;
    private static Http http;

    @BeforeAll
    static void start() throws IOException {
        Map<String, String> otel = Map.of("otel.sdk.disabled", "false", "otel.traces.exporter", "logging",
                "otel.metrics.exporter", "none", "otel.logs.exporter", "none", "otel.service.name", "idemkey-telemetry");
        WebArchive war = Deployments.guardedApp("telemetry", otel);
        ServerProcess.Kind kind = ServerProcess.Kind.ofThisRun();
        if (kind == ServerProcess.Kind.PAYARA) {
            war.addAsLibraries(Maven.resolver().resolve("io.opentelemetry:opentelemetry-exporter-logging:"
                    + System.getProperty("payara.opentelemetry.version", "1.29.0")).withoutTransitivity().asFile());
        }
        Path file = Deployments.export(Files.createTempDirectory("idemkey-telemetry"), war);
        server = switch (kind) {
            case PAYARA -> PayaraMicroServer.start(List.of(file), ServerProcess.freePort(), Map.of());
            case LIBERTY -> LibertyServer.startWithThirdPartyApis(List.of(file), ServerProcess.freePort(),
                    List.of("appSecurity-5.0", "mpTelemetry-2.0"));
            case WILDFLY -> WildFlyServer.start(List.of(file), ServerProcess.freePort(), Map.of());
        };
        http = new Http(server.uri("telemetry"));
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void spanOfEachRequestCarriesTheDecisionAndWhetherItIsAReplay() {
        String item = "span-" + Http.newKey(); // in the span's path attribute: finds this test's spans
        String key = Http.newKey();
        HttpResponse<String> first = http.postJson("guarded/items/" + item, key, "{}");
        assertEquals(201, first.statusCode(), first.body());
        assertEquals(201, http.postJson("guarded/items/" + item, key, "{}").statusCode());
        assertEquals(422, http.postJson("guarded/items/" + item, key, "{\"other\":1}").statusCode());
        assertEquals(400, http.postJson("guarded/items/" + item, null, "{}").statusCode());

        for (String decision : List.of("acquired", "replayed", "mismatch", "key-missing")) {
            String span = await("the span of the " + decision + " request").atMost(Duration.ofSeconds(30))
                    .until(() -> span(item, decision), Optional::isPresent).orElseThrow();
            assertTrue(span.contains("idempotency.replayed=" + decision.equals("replayed")), span);
        }
    }

    /** The exported span line of a request to this item with this decision. */
    private static Optional<String> span(String item, String decision) {
        Pattern attribute = Pattern.compile("idempotency\\.decision=" + Pattern.quote(decision) + "[,}]");
        return server.log().lines()
                .filter(line -> line.contains(item) && attribute.matcher(line).find())
                .findFirst();
    }
}
