package io.idemkey.it.app;

import io.idemkey.IdempotencyKey;
import jakarta.transaction.Transactional;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

import javax.naming.InitialContext;
import javax.naming.NamingException;
import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;

/**
 * The benchmark's endpoints: a no-op without and with {@code @IdempotencyKey}, the no-op with Redis
 * round trips of its own and nothing of Idemkey's (the floor under a guarded request's cost), and
 * answers of about 200 bytes and 10 KB (a realistic order with line items) for the memory figures.
 */
@Path("/bench")
@Consumes(MediaType.APPLICATION_JSON)
@Produces(MediaType.APPLICATION_JSON)
public class BenchResource {

    static final String NO_OP = "{\"status\":\"ok\"}";

    @POST
    @Path("bare")
    public String bare(String body) {
        return NO_OP;
    }

    @POST
    @Path("guarded")
    @IdempotencyKey
    public String guarded(String body) {
        return NO_OP;
    }

    /**
     * The no-op with one Redis round trip of its own and nothing of Idemkey's: the least a replay
     * from Redis can cost while its thread waits for the reply. In this class, so that it costs per
     * request what the bare no-op does beside its round trip (the same resource to make). Not in the
     * JDBC-only test application, which leaves {@link PlainRedis} out.
     */
    @POST
    @Path("one-round-trip")
    public String oneRoundTrip(String body) {
        PlainRedis.roundTrips(1);
        return NO_OP;
    }

    /** The same with two round trips, one after the other: the least a first execution can cost. */
    @POST
    @Path("two-round-trips")
    public String twoRoundTrips(String body) {
        PlainRedis.roundTrips(2);
        return NO_OP;
    }

    /**
     * The no-op's effect as a row, written in the method's transaction through the DataSource
     * {@code jdbc/idemkey} (the benchmark's JDBC section creates the table {@code bench_effects}).
     */
    @POST
    @Path("transactional")
    @IdempotencyKey
    @Transactional
    public String transactional(String body) throws NamingException, SQLException {
        DataSource dataSource = (DataSource) new InitialContext().lookup("jdbc/idemkey");
        try (Connection connection = dataSource.getConnection();
             PreparedStatement insert = connection.prepareStatement("INSERT INTO bench_effects (body) VALUES (?)")) {
            insert.setString(1, body);
            insert.executeUpdate();
        }
        return NO_OP;
    }

    /** About 200 bytes of JSON. */
    @POST
    @Path("small")
    @IdempotencyKey
    public String small(String body) {
        return "{\"id\":\"ord_8e03978e40d5\",\"status\":\"confirmed\",\"amount\":{\"value\":12999,\"currency\":\"EUR\"},"
                + "\"customer\":\"cus_4f2a9c\",\"items\":3,\"createdAt\":\"2026-11-22T10:15:30Z\",\"note\":\"leave at the back door\",\"v\":2}";
    }

    /** About 10 KB of JSON: an order with 52 line items. */
    @POST
    @Path("large")
    @IdempotencyKey
    public String large(String body) {
        StringBuilder json = new StringBuilder("{\"id\":\"ord_5d1c7e0a\",\"status\":\"confirmed\",\"customer\":{")
                .append("\"id\":\"cus_4f2a9c\",\"name\":\"Ada Lovelace\",\"email\":\"ada@example.com\"},\"items\":[");
        for (int i = 0; i < 52; i++) {
            json.append(i == 0 ? "" : ",")
                    .append("{\"sku\":\"SKU-").append(10_000 + i * 37)
                    .append("\",\"name\":\"Article ").append(i).append(" - ").append(ADJECTIVES[i % ADJECTIVES.length])
                    .append(" edition\",\"quantity\":").append(1 + i % 4)
                    .append(",\"unitPrice\":{\"value\":").append(499 + i * 113).append(",\"currency\":\"EUR\"}")
                    .append(",\"tax\":{\"rate\":0.2,\"value\":").append((499 + i * 113) / 5)
                    .append("},\"warehouse\":\"WH-").append(i % 7).append("\",\"tags\":[\"").append(ADJECTIVES[(i * 3) % ADJECTIVES.length])
                    .append("\",\"").append(ADJECTIVES[(i * 5 + 1) % ADJECTIVES.length]).append("\"]}");
        }
        return json.append("],\"total\":{\"value\":412345,\"currency\":\"EUR\"},\"createdAt\":\"2026-11-22T10:15:30Z\"}").toString();
    }

    private static final String[] ADJECTIVES = {"blue", "limited", "classic", "deluxe", "travel", "eco", "pro", "mini",
            "family", "signature", "outdoor", "vintage"};
}
