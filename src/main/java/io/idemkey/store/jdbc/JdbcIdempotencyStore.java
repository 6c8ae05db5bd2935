package io.idemkey.store.jdbc;

import io.idemkey.spi.AcquireResult;
import io.idemkey.spi.IdempotencyStore;
import io.idemkey.spi.StoreUnavailableException;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTransientException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Arrays;
import java.util.regex.Pattern;

/**
 * The {@link IdempotencyStore} in a relational table (PostgreSQL), through the application's
 * {@link DataSource}. Every operation is one SQL statement; time is the database's ({@code now()}),
 * so every server agrees on expiry. A row whose {@code expires_at} has passed counts as absent and
 * is taken over atomically by the next acquire.
 *
 * <p>Acquire inserts the in-progress row, takes over an expired one, or reports the existing one, in
 * one statement ({@code INSERT ... ON CONFLICT DO UPDATE ... WHERE expired}, and a {@code SELECT} of
 * the row it did not take, in one CTE). The one case that needs a second statement: another request
 * inserted the same key while the first ran, too late for that statement's snapshot to see it.
 * Complete, release and renew are compare-and-set on the owner token, one statement each. Statements
 * have a bounded timeout, so a duplicate never waits longer than that on another request's
 * uncommitted transaction.
 */
public final class JdbcIdempotencyStore implements IdempotencyStore {

    /** A table name, optionally schema-qualified: SQL identifiers only, never text from a request. */
    private static final Pattern TABLE = Pattern.compile("([A-Za-z_][A-Za-z0-9_]{0,62}\\.)?[A-Za-z_][A-Za-z0-9_]{0,62}");

    private final DataSource dataSource;
    private final String table;
    private final int timeoutSeconds;
    private final String acquire;
    private final String complete;
    private final String release;
    private final String renew;

    /**
     * @param dataSource     where the table lives; connections are borrowed per operation (autocommit)
     * @param table          the table's name ({@code idempotency_keys})
     * @param timeoutSeconds the longest a statement may take, waits on other transactions' locks included
     */
    public JdbcIdempotencyStore(DataSource dataSource, String table, int timeoutSeconds) {
        requireTableName(table);
        if (timeoutSeconds < 1) {
            throw new IllegalArgumentException("the statement timeout must be at least 1 s: " + timeoutSeconds);
        }
        this.dataSource = dataSource;
        this.table = table;
        this.timeoutSeconds = timeoutSeconds;
        this.acquire = """
                WITH taken AS (
                  INSERT INTO %1$s AS r (record_key, completed, fingerprint, owner_token, response, expires_at)
                  VALUES (?, FALSE, ?, ?, NULL, now() + ? * INTERVAL '1 millisecond')
                  ON CONFLICT (record_key) DO UPDATE
                    SET completed = FALSE, fingerprint = EXCLUDED.fingerprint, owner_token = EXCLUDED.owner_token,
                        response = NULL, expires_at = EXCLUDED.expires_at
                    WHERE r.expires_at <= now() OR (NOT r.completed AND r.owner_token = EXCLUDED.owner_token)
                  RETURNING TRUE AS taken
                )
                SELECT TRUE, NULL::BOOLEAN, NULL::BYTEA, NULL::BYTEA, 0::BIGINT FROM taken
                UNION ALL
                SELECT FALSE, completed, fingerprint, response,
                       CEIL(EXTRACT(EPOCH FROM (expires_at - now())) * 1000)::BIGINT
                  FROM %1$s WHERE record_key = ? AND expires_at > now() AND NOT EXISTS (SELECT 1 FROM taken)
                """.formatted(table);
        this.complete = """
                UPDATE %s SET response = CASE WHEN completed THEN response ELSE ? END,
                              expires_at = CASE WHEN completed THEN expires_at ELSE now() + ? * INTERVAL '1 millisecond' END,
                              completed = TRUE
                 WHERE record_key = ? AND owner_token = ? AND (completed OR expires_at > now())
                """.formatted(table);
        this.release = """
                WITH released AS (
                  DELETE FROM %1$s WHERE record_key = ? AND owner_token = ? AND NOT completed RETURNING 1
                )
                SELECT EXISTS (SELECT 1 FROM released)
                    OR NOT EXISTS (SELECT 1 FROM %1$s WHERE record_key = ? AND expires_at > now())
                """.formatted(table);
        this.renew = """
                UPDATE %s SET expires_at = now() + ? * INTERVAL '1 millisecond'
                 WHERE record_key = ? AND owner_token = ? AND NOT completed AND expires_at > now()
                """.formatted(table);
    }

    /** The table and its expiry index, as {@code idempotency.jdbc.create-table} creates them (README has it too). */
    public static String ddl(String table) {
        requireTableName(table);
        String index = table.substring(table.indexOf('.') + 1) + "_expires_at";
        return """
                CREATE TABLE IF NOT EXISTS %1$s (
                  record_key  TEXT          NOT NULL PRIMARY KEY,
                  completed   BOOLEAN       NOT NULL,
                  fingerprint BYTEA         NOT NULL,
                  owner_token TEXT          NOT NULL,
                  response    BYTEA,
                  expires_at  TIMESTAMPTZ   NOT NULL
                );
                CREATE INDEX IF NOT EXISTS %2$s ON %1$s (expires_at);
                """.formatted(table, index);
    }

    /** Whether this is a table name the store accepts: an SQL identifier, optionally schema-qualified. */
    public static boolean isTableName(String table) {
        return TABLE.matcher(table).matches();
    }

    private static void requireTableName(String table) {
        if (!isTableName(table)) {
            throw new IllegalArgumentException("not a table name: " + table);
        }
    }

    /** Creates the table and its index if they are missing. */
    public void createTable() {
        try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement()) {
            statement.setQueryTimeout(timeoutSeconds);
            statement.execute(ddl(table));
        } catch (SQLException e) {
            throw failure("create the table " + table, e);
        }
    }

    @Override
    public AcquireResult acquire(String recordKey, byte[] fingerprint, String ownerToken, Duration lockTtl) {
        for (int attempt = 1; attempt <= 2; attempt++) {
            AcquireResult result = query(acquire, "acquire", statement -> {
                statement.setString(1, recordKey);
                statement.setBytes(2, fingerprint);
                statement.setString(3, ownerToken);
                statement.setLong(4, millis(lockTtl));
                statement.setString(5, recordKey);
            }, row -> row.next() ? acquired(row, fingerprint) : null);
            if (result != null) {
                return result;
            }
            // Another request inserted the key while this statement ran: its snapshot could not see the row.
        }
        throw new IllegalStateException("acquire saw neither a row to take nor one to report, twice: " + recordKey);
    }

    private static AcquireResult acquired(ResultSet row, byte[] fingerprint) throws SQLException {
        if (row.getBoolean(1)) {
            return AcquireResult.ACQUIRED;
        }
        if (!Arrays.equals(row.getBytes(3), fingerprint)) {
            return AcquireResult.MISMATCH;
        }
        Duration left = Duration.ofMillis(Math.max(0, row.getLong(5)));
        return row.getBoolean(2) ? new AcquireResult.Completed(row.getBytes(4), left) : new AcquireResult.InProgress(left);
    }

    @Override
    public boolean complete(String recordKey, String ownerToken, byte[] response, Duration ttl) {
        return update(complete, "complete", statement -> {
            statement.setBytes(1, response);
            statement.setLong(2, millis(ttl));
            statement.setString(3, recordKey);
            statement.setString(4, ownerToken);
        });
    }

    @Override
    public boolean release(String recordKey, String ownerToken) {
        return query(release, "release", statement -> {
            statement.setString(1, recordKey);
            statement.setString(2, ownerToken);
            statement.setString(3, recordKey);
        }, row -> row.next() && row.getBoolean(1));
    }

    @Override
    public boolean renew(String recordKey, String ownerToken, Duration lockTtl) {
        return update(renew, "renew", statement -> {
            statement.setLong(1, millis(lockTtl));
            statement.setString(2, recordKey);
            statement.setString(3, ownerToken);
        });
    }

    @Override
    public boolean isAvailable() {
        try (Connection connection = dataSource.getConnection()) {
            return connection.isValid(timeoutSeconds);
        } catch (SQLException e) {
            return false;
        }
    }

    /** The data source belongs to the container (or the caller): nothing to close here. */
    @Override
    public void close() {
    }

    @Override
    public String toString() {
        return "JdbcIdempotencyStore[" + table + "]";
    }

    @FunctionalInterface
    private interface Parameters {
        void set(PreparedStatement statement) throws SQLException;
    }

    @FunctionalInterface
    private interface Rows<T> {
        T read(ResultSet rows) throws SQLException;
    }

    /** One statement on a borrowed connection, with the timeout; SQL errors classified by {@link #failure}. */
    private <T> T query(String sql, String operation, Parameters parameters, Rows<T> rows) {
        try (Connection connection = dataSource.getConnection(); PreparedStatement statement = connection.prepareStatement(sql)) {
            statement.setQueryTimeout(timeoutSeconds);
            parameters.set(statement);
            try (ResultSet result = statement.executeQuery()) {
                return rows.read(result);
            }
        } catch (SQLException e) {
            throw failure(operation, e);
        }
    }

    private boolean update(String sql, String operation, Parameters parameters) {
        try (Connection connection = dataSource.getConnection(); PreparedStatement statement = connection.prepareStatement(sql)) {
            statement.setQueryTimeout(timeoutSeconds);
            parameters.set(statement);
            return statement.executeUpdate() == 1;
        } catch (SQLException e) {
            throw failure(operation, e);
        }
    }

    /**
     * The one place store errors are classified: the database unreachable, timed out, or busy (the
     * store is unavailable: 503 or fail-open), anything else a defect.
     */
    private RuntimeException failure(String operation, SQLException e) {
        String state = e.getSQLState() == null ? "" : e.getSQLState();
        boolean unavailable = e instanceof SQLTransientException
                || state.startsWith("08")      // connection exception
                || state.startsWith("53")      // insufficient resources
                || state.startsWith("57")      // operator intervention: query canceled (timeout), shutting down
                || state.startsWith("40")      // serialization failure, deadlock
                || state.equals("55P03");      // lock not available
        String message = "The idempotency table " + table + " could not " + operation + ": " + e.getMessage();
        return unavailable ? new StoreUnavailableException(message, e) : new IllegalStateException(message, e);
    }

    private static long millis(Duration duration) {
        return Math.max(1, duration.toMillis());
    }
}
