package io.idemkey.it.app;

import io.idemkey.IdempotencyKey;
import jakarta.enterprise.context.RequestScoped;
import jakarta.transaction.TransactionSynchronizationRegistry;
import jakarta.transaction.Transactional;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import javax.naming.InitialContext;
import javax.naming.NamingException;
import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A payment whose effect is a row in the same database as the idempotency records (the DataSource
 * {@code jdbc/idemkey}), written in a {@code @Transactional} method. The {@code X-Then} header (not
 * part of the request's fingerprint) says what happens after the effect is written: {@code crash}
 * halts the JVM right after the transaction commits, {@code hold} waits until
 * {@code POST exactly-once/resume?key=...}, {@code refuse} answers 402 by an exception (rolled back),
 * {@code fail} answers 500 by an exception, {@code explode} throws one that no ExceptionMapper maps,
 * {@code rollback-only} marks the transaction rollback-only and answers 201 all the same,
 * {@code poison} runs a statement that fails in the transaction and answers 201 all the same (the
 * database then refuses every further statement of the transaction: SQL state 25P02).
 */
@Path("exactly-once")
@RequestScoped
@Produces(MediaType.APPLICATION_JSON)
public class ExactlyOnceResource {

    public static final String DATA_SOURCE = "jdbc/idemkey";
    /** A DataSource whose pool has two connections, for a test that drains it. */
    public static final String SMALL_DATA_SOURCE = "jdbc/idemkey-small";
    private static final Map<String, CountDownLatch> HELD = new ConcurrentHashMap<>();

    public record Charge(String key, long effect) {
    }

    @POST
    @Path("charge")
    @Transactional
    @IdempotencyKey(lockTtlSeconds = 3)
    public Response charge(@HeaderParam("Idempotency-Key") String key, @HeaderParam("X-Then") String then)
            throws SQLException, NamingException, InterruptedException {
        long effect = insertEffect(key);
        if ("crash".equals(then)) {
            HaltAfterCommit.register();
        } else if ("hold".equals(then)) {
            hold(key);
        } else if ("refuse".equals(then)) {
            throw new WebApplicationException(Response.status(402).type(MediaType.TEXT_PLAIN).entity("declined " + effect).build());
        } else if ("fail".equals(then)) {
            throw new WebApplicationException(Response.status(500).type(MediaType.TEXT_PLAIN).entity("failed " + effect).build());
        } else if ("rollback-only".equals(then)) {
            registry().setRollbackOnly(); // the container rolls back silently and the 201 goes out
        } else if ("explode".equals(then)) {
            throw new IllegalStateException("exploded after effect " + effect);
        } else if ("poison".equals(then)) {
            poisonTransaction();
        }
        return Response.status(201).entity(new Charge(key, effect)).build();
    }

    /**
     * A business transaction that holds a connection of {@code jdbc/idemkey-small} until
     * {@code POST exactly-once/resume?key=...}: several of them drain that pool.
     */
    @POST
    @Path("occupy")
    @Transactional
    public String occupy(@QueryParam("key") String key) throws NamingException, SQLException, InterruptedException {
        try (Connection connection = ((DataSource) new InitialContext().lookup(SMALL_DATA_SOURCE)).getConnection();
             PreparedStatement query = connection.prepareStatement("SELECT 1")) {
            query.executeQuery().close();
            hold(key);
        }
        return "released";
    }

    /** Whether a request with this key is waiting in {@code hold}. */
    @GET
    @Path("held")
    public boolean held(@QueryParam("key") String key) {
        return HELD.containsKey(key);
    }

    @POST
    @Path("resume")
    public void resume(@QueryParam("key") String key) {
        HELD.computeIfAbsent(key, k -> new CountDownLatch(1)).countDown();
    }

    /** Waits until {@code POST exactly-once/resume?key=...} (at most 2 minutes). */
    static void hold(String key) throws InterruptedException {
        HELD.computeIfAbsent(key, k -> new CountDownLatch(1)).await(120, TimeUnit.SECONDS);
    }

    static long insertEffect(String key) throws SQLException, NamingException {
        try (Connection connection = dataSource().getConnection();
             PreparedStatement insert = connection.prepareStatement(
                     "INSERT INTO effects (idem_key) VALUES (?) RETURNING id")) {
            insert.setString(1, key);
            try (ResultSet row = insert.executeQuery()) {
                row.next();
                return row.getLong(1);
            }
        }
    }

    /** A failed statement the method swallows: the database aborts the transaction, which can only roll back. */
    private static void poisonTransaction() throws NamingException {
        try (Connection connection = dataSource().getConnection(); PreparedStatement failing = connection.prepareStatement("SELECT 1 / 0")) {
            failing.executeQuery();
        } catch (SQLException expected) {
            // division by zero, swallowed: the transaction is aborted
        }
    }

    /** The effects table on this database ({@code PostgreSQL} or {@code MariaDB}), created by the test before the server starts. */
    public static String ddl(String database) {
        return database.equals("MariaDB")
                ? "CREATE TABLE IF NOT EXISTS effects (id BIGINT AUTO_INCREMENT PRIMARY KEY, idem_key VARCHAR(255) NOT NULL)"
                : "CREATE TABLE IF NOT EXISTS effects (id BIGSERIAL PRIMARY KEY, idem_key TEXT NOT NULL)";
    }

    private static DataSource dataSource() throws NamingException {
        return (DataSource) new InitialContext().lookup(DATA_SOURCE);
    }

    static TransactionSynchronizationRegistry registry() throws NamingException {
        return (TransactionSynchronizationRegistry) new InitialContext().lookup("java:comp/TransactionSynchronizationRegistry");
    }
}
