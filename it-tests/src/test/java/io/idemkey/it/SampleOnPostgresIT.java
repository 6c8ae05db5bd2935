package io.idemkey.it;

import io.idemkey.sample.SampleLauncher;
import io.idemkey.testing.PostgresServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.sql.SQLException;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * The sample service in its PostgreSQL mode, as {@code -Dsample.store=jdbc} starts it: orders are
 * rows written in the guarded method's transaction, next to Idemkey's records, and the record
 * written in that transaction replays what the client first got.
 */
class SampleOnPostgresIT {

    private static PostgresServer postgres;
    private static ServerProcess server;

    @BeforeAll
    static void start() {
        postgres = PostgresServer.start();
        server = ServerProcess.startWithPostgres(ServerProcess.Kind.ofThisRun(), List.of(Path.of("target", "idemkey-sample.war")),
                ServerProcess.freePort(), SampleLauncher.POSTGRES_MODE, postgres, List.of());
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
        if (postgres != null) {
            postgres.close();
        }
    }

    @Test
    void anOrderPlacedTwiceWithOneKeyIsOneRowAndOneCompletedRecord() throws SQLException {
        Http http = new Http(server.uri("idemkey-sample"));
        String key = Http.newKey();
        HttpResponse<String> placed = http.postJson("api/orders", key, "{\"item\":\"book\",\"quantity\":1}");
        assertEquals(201, placed.statusCode(), placed.body() + "\n" + server.logFile());
        HttpResponse<String> replayed = http.postJson("api/orders", key, "{\"item\":\"book\",\"quantity\":1}");
        assertEquals(placed.body(), replayed.body());
        // the replay is the record written in the transaction, rendered ahead of the response: the same
        assertEquals(placed.headers().firstValue("Location"), replayed.headers().firstValue("Location"));
        assertEquals(placed.headers().firstValue("Content-Type"), replayed.headers().firstValue("Content-Type"));
        assertEquals("true", replayed.headers().firstValue("Idempotent-Replayed").orElse(null));
        assertFalse(server.log().contains("after its transaction, not in it"), "recorded in the transaction");
        assertEquals(1, postgres.queryLong("SELECT count(*) FROM orders"));
        assertEquals(1, postgres.queryLong("SELECT count(*) FROM idempotency_keys WHERE completed"));
        String location = placed.headers().firstValue("Location").orElseThrow();
        assertEquals(200, http.get(location.substring(location.indexOf("api/orders/"))).statusCode());
    }
}
