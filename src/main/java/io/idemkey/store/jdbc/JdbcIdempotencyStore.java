package io.idemkey.store.jdbc;

import io.idemkey.spi.AcquireResult;
import io.idemkey.spi.IdempotencyStore;
import io.idemkey.spi.Lease;
import io.idemkey.spi.Renewal;
import io.idemkey.spi.StoreUnavailableException;
import io.idemkey.spi.TransactionalCompletion;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTransientException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Logger;
import java.util.regex.Pattern;

/**
 * The {@link IdempotencyStore} in a relational table (PostgreSQL), through the application's
 * {@link DataSource}. Every operation is one SQL statement; time is the database's ({@code now()}),
 * so every server agrees on expiry. A row whose {@code expires_at} has passed counts as absent and
 * is taken over atomically by the next acquire; {@link #deleteExpired} removes such rows in batches.
 *
 * <p>Acquire is one statement that reads the row first and writes only when there is nothing alive
 * to report: a replay, a conflict or a mismatch reads without taking a lock, so a duplicate never
 * waits for another request's transaction (one that holds the row while it commits the record with
 * its effects, {@link #completeInTransaction}). It inserts when no row is visible, or takes over an
 * expired row. The one case that needs the statement again: another request inserted or took over
 * the same key while it ran, too late for its snapshot to see.
 *
 * <p>Complete, release and renew are compare-and-set on the owner token, one statement each. Every
 * call is bounded by the store's timeout, the wait for a pooled connection included
 * ({@link StoreConnections}). Outside a JTA transaction each runs on its own connection in
 * auto-commit mode (as a container's DataSource hands them out when no transaction is active).
 */
public final class JdbcIdempotencyStore implements IdempotencyStore {

    private static final Logger LOG = Logger.getLogger(JdbcIdempotencyStore.class.getName());

    /** A table name, optionally schema-qualified: SQL identifiers only, never text from a request. */
    private static final Pattern TABLE = Pattern.compile("([A-Za-z_][A-Za-z0-9_]{0,62}\\.)?[A-Za-z_][A-Za-z0-9_]{0,62}");
    /**
     * The pauses before acquire runs again, when concurrent writers kept its snapshot from seeing the
     * row (again at once) or a transaction holds an expired row: a cleanup's DELETE for a few
     * milliseconds, or the owner committing its record. Bounded: a row held longer is reported in
     * progress.
     */
    private static final long[] ACQUIRE_PAUSES_MS = {0, 5, 25, 100, 250};

    private final StoreConnections connections;
    private final String table;
    private final String acquire;
    private final String complete;
    private final String completeInTransaction;
    private final AtomicBoolean warnedNotJoined = new AtomicBoolean();
    /** The table could not be created at start-up (the database was away): created on first use. */
    private volatile boolean tablePending;
    private final String release;
    private final String renew;
    private final String deleteExpired;

    /**
     * @param dataSource     where the table lives; connections are borrowed per operation
     * @param table          the table's name ({@code idempotency_keys})
     * @param timeoutSeconds the longest a store call may take, from borrowing a connection to the answer
     *                       (waits on other transactions' locks included; a vanished database: about a
     *                       second more)
     */
    public JdbcIdempotencyStore(DataSource dataSource, String table, int timeoutSeconds) {
        requireTableName(table);
        if (timeoutSeconds < 1) {
            throw new IllegalArgumentException("the statement timeout must be at least 1 s: " + timeoutSeconds);
        }
        this.connections = new StoreConnections(dataSource, table, timeoutSeconds);
        this.table = table;
        // The parameters once (key, fingerprint, owner token, lock TTL in ms), in the CTE "p". The
        // UPDATE and the INSERT write only when the row read first is expired, ours, or absent: their
        // uncorrelated EXISTS conditions are false otherwise, and nothing is locked or waited for. An
        // expired row that a transaction still holds (its owner committing the record with its
        // effects) is skipped, not waited for: the statement then returns no row and is run again,
        // and reports the row in progress if it is still held.
        this.acquire = """
                WITH p AS (
                  SELECT ?::TEXT AS k, ?::BYTEA AS f, ?::TEXT AS o, ?::BIGINT * INTERVAL '1 millisecond' AS lease
                ), existing AS (
                  SELECT r.completed, r.fingerprint, r.response, r.expires_at,
                         r.expires_at <= now() OR (NOT r.completed AND r.owner_token = p.o) AS takeable
                    FROM %1$s r JOIN p ON r.record_key = p.k
                ), lockable AS (
                  SELECT r.record_key FROM %1$s r JOIN p ON r.record_key = p.k
                   WHERE EXISTS (SELECT 1 FROM existing WHERE takeable)
                     AND (r.expires_at <= now() OR (NOT r.completed AND r.owner_token = p.o))
                     FOR UPDATE OF r SKIP LOCKED
                ), taken AS (
                  UPDATE %1$s AS r
                     SET completed = FALSE, fingerprint = p.f, owner_token = p.o, response = NULL,
                         expires_at = now() + p.lease
                    FROM p, lockable l
                   WHERE r.record_key = l.record_key
                  RETURNING 1
                ), inserted AS (
                  INSERT INTO %1$s (record_key, completed, fingerprint, owner_token, response, expires_at)
                  SELECT p.k, FALSE, p.f, p.o, NULL, now() + p.lease FROM p
                   WHERE NOT EXISTS (SELECT 1 FROM existing)
                  ON CONFLICT (record_key) DO NOTHING
                  RETURNING 1
                )
                SELECT TRUE, NULL::BOOLEAN, NULL::BYTEA, NULL::BYTEA, 0::BIGINT FROM taken
                UNION ALL
                SELECT TRUE, NULL::BOOLEAN, NULL::BYTEA, NULL::BYTEA, 0::BIGINT FROM inserted
                UNION ALL
                SELECT FALSE, e.completed, e.fingerprint,
                       CASE WHEN e.completed AND e.fingerprint = p.f THEN e.response END,
                       CEIL(EXTRACT(EPOCH FROM (e.expires_at - now())) * 1000)::BIGINT
                  FROM existing e, p WHERE NOT e.takeable
                """.formatted(table);
        // statement_timestamp(), not now(): inside a transaction now() is when the transaction began,
        // and the lease must still hold when the record is written.
        String completing = """
                UPDATE %s SET response = CASE WHEN completed THEN response ELSE ? END,
                              expires_at = CASE WHEN completed THEN expires_at
                                                ELSE statement_timestamp() + ? * INTERVAL '1 millisecond' END,
                              completed = TRUE
                 WHERE record_key = ? AND owner_token = ? AND (completed OR expires_at > statement_timestamp())
                """.formatted(table);
        this.complete = completing;
        // In the caller's transaction only if it is one: a transaction of this database that has a
        // transaction id (it wrote, or was given one: see completeInTransaction) and reads committed
        // data (a REPEATABLE READ or SERIALIZABLE snapshot would fail on the lease renewals committed
        // since it began). Otherwise nothing is written.
        this.completeInTransaction = """
                WITH tx AS (
                  SELECT txid_current_if_assigned() IS NOT NULL AS has_id,
                         current_setting('transaction_isolation') = 'read committed' AS read_committed
                ), completed AS (
                  %s  AND (SELECT has_id AND read_committed FROM tx)
                  RETURNING 1
                )
                SELECT has_id, read_committed, EXISTS (SELECT 1 FROM completed) FROM tx
                """.formatted(completing.strip());
        this.release = """
                WITH released AS (
                  DELETE FROM %1$s WHERE record_key = ? AND owner_token = ? AND NOT completed RETURNING 1
                )
                SELECT EXISTS (SELECT 1 FROM released)
                    OR NOT EXISTS (SELECT 1 FROM %1$s WHERE record_key = ? AND expires_at > now())
                """.formatted(table);
        // Every lease of a batch in one statement: a row still ours and alive is locked and extended;
        // one locked by a transaction is skipped, not waited for (the renewals share a few threads
        // with every other lease), and answered "unknown" if the statement's snapshot shows it ours
        // and alive (its owner's completion being committed, another renewal of it), else "lost"
        // (a takeover or a cleanup locks only expired rows). 1 renewed, 0 unknown, -1 lost.
        this.renew = """
                WITH p AS (
                  SELECT * FROM unnest(?::TEXT[], ?::TEXT[], ?::BIGINT[]) WITH ORDINALITY AS p(k, o, lease_ms, i)
                ), alive AS (
                  SELECT p.i, r.record_key FROM p JOIN %1$s r ON r.record_key = p.k AND r.owner_token = p.o
                   WHERE NOT r.completed AND r.expires_at > now()
                ), locked AS (
                  SELECT r.record_key FROM %1$s r JOIN alive a ON r.record_key = a.record_key
                   WHERE NOT r.completed AND r.expires_at > now()
                     FOR UPDATE OF r SKIP LOCKED
                ), renewed AS (
                  UPDATE %1$s AS r SET expires_at = now() + p.lease_ms * INTERVAL '1 millisecond'
                    FROM p, locked l
                   WHERE r.record_key = l.record_key AND p.k = l.record_key AND r.owner_token = p.o
                  RETURNING p.i
                )
                SELECT p.i, CASE WHEN EXISTS (SELECT 1 FROM renewed n WHERE n.i = p.i) THEN 1
                                 WHEN EXISTS (SELECT 1 FROM alive a WHERE a.i = p.i) THEN 0
                                 ELSE -1 END
                  FROM p ORDER BY p.i
                """.formatted(table);
        // Locks only expired rows, skipping those another cleaner or an acquire holds; checks expiry
        // again on the locked row (an acquire may have taken it over in between).
        this.deleteExpired = """
                DELETE FROM %1$s WHERE record_key IN (
                  SELECT record_key FROM %1$s WHERE expires_at <= now() ORDER BY expires_at LIMIT ?
                     FOR UPDATE SKIP LOCKED
                ) AND expires_at <= now()
                """.formatted(table);
    }

    /** The table and its expiry index, as {@code idempotency.jdbc.create-table} creates them (README has it too). */
    public static String ddl(String table) {
        requireTableName(table);
        String index = table.substring(table.indexOf('.') + 1) + "_expires_at";
        return """
                CREATE TABLE IF NOT EXISTS %1$s (
                  record_key  TEXT COLLATE "C" NOT NULL PRIMARY KEY,
                  completed   BOOLEAN          NOT NULL,
                  fingerprint BYTEA            NOT NULL,
                  owner_token TEXT             NOT NULL,
                  response    BYTEA,
                  expires_at  TIMESTAMPTZ      NOT NULL
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

    /**
     * Creates the table and its index if they are missing. If the database cannot be reached now,
     * the table is created before the first statement that finds it reachable.
     *
     * @throws StoreUnavailableException if the database cannot be reached (creation is then pending)
     */
    public void createTable() {
        tablePending = true;
        createPendingTable();
    }

    private void createPendingTable() {
        if (!tablePending) {
            return;
        }
        synchronized (this) {
            if (tablePending) {
                createTableNow();
                tablePending = false;
            }
        }
    }

    private void createTableNow() {
        for (int attempt = 1; ; attempt++) {
            try {
                executeDdl();
                return;
            } catch (SQLException e) {
                // Servers (or applications) starting at once: "IF NOT EXISTS" does not stop one from
                // colliding with another's uncommitted catalog rows (unique_violation, duplicate_table,
                // a deadlock between the two). Once the other committed, the table is there.
                String state = sqlState(e);
                boolean collided = state.equals("23505") || state.equals("42P07") || state.startsWith("40");
                if (!collided || attempt == 5 || !pause(100L * attempt)) {
                    throw failure("create the table " + table, e);
                }
            }
        }
    }

    private void executeDdl() throws SQLException {
        connections.outsideTransaction("create the table " + table, (connection, timeout) -> {
            try (Statement statement = connection.createStatement()) {
                statement.setQueryTimeout(timeout);
                return statement.execute(ddl(table));
            }
        });
    }

    @Override
    public AcquireResult acquire(String recordKey, byte[] fingerprint, String ownerToken, Duration lockTtl) {
        createPendingTable();
        for (int attempt = 0; attempt <= ACQUIRE_PAUSES_MS.length; attempt++) {
            if (attempt > 0 && !pause(ACQUIRE_PAUSES_MS[attempt - 1])) {
                break;
            }
            AcquireResult result;
            try {
                result = query(acquire, "acquire", statement -> {
                    statement.setString(1, recordKey);
                    statement.setBytes(2, fingerprint);
                    statement.setString(3, ownerToken);
                    statement.setLong(4, millis(lockTtl));
                }, row -> row.next() ? acquired(row, fingerprint) : null);
            } catch (StoreUnavailableException e) {
                if (attempt == ACQUIRE_PAUSES_MS.length || !isConflict(e.getCause())) {
                    throw e;
                }
                continue; // a serialization failure or deadlock with another writer of the key: run again
            }
            if (result != null) {
                return result;
            }
            // Another request inserted or took over the key while this statement ran, after its snapshot,
            // or a transaction holds the expired row (its owner committing).
        }
        // Still racing with other writers of this key, or held all along: somebody else has it right now.
        return new AcquireResult.InProgress(Duration.ZERO);
    }

    /** Sleeps, unless interrupted (then false, the interrupt kept). */
    private static boolean pause(long millis) {
        if (millis == 0) {
            return true;
        }
        try {
            Thread.sleep(millis);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
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

    /**
     * The completing statement on the connection the container enlists in the caller's JTA
     * transaction (a transactional DataSource, the default of Payara's JDBC resources and Liberty's
     * {@code <dataSource>}, hands out the transaction's connection while one is active). The same
     * statement checks that it really runs in that transaction, at READ COMMITTED. Whether a
     * connection is enlisted cannot be asked through JDBC (Liberty's report auto-commit mode even
     * then), so the database is asked: a transaction that already has a transaction id is one
     * (autocommit gives every statement a new transaction, which has none when it begins). One that
     * has not written yet (JPA writes at commit, when the persistence context flushes) is given an
     * id by one statement ({@code txid_current()}) and asked again by the next: inside a
     * transaction the id is still there, in autocommit it is gone with the statement that took it.
     * So the record joins whatever the method wrote, or will write, in the transaction.
     */
    @Override
    public TransactionalCompletion completeInTransaction(String recordKey, String ownerToken, byte[] response,
                                                         Duration ttl) {
        createPendingTable();
        TransactionalCompletion outcome;
        try {
            outcome = connections.inTransaction("complete", (connection, timeout) -> {
                InTransaction first = completeInTransaction(connection, timeout, recordKey, ownerToken, response, ttl);
                if (first.outcome() != null || !first.readCommitted()) {
                    return first.outcomeOrNotJoined();
                }
                try (Statement statement = connection.createStatement()) {
                    statement.setQueryTimeout(timeout);
                    statement.execute("SELECT txid_current()");
                }
                return completeInTransaction(connection, timeout, recordKey, ownerToken, response, ttl).outcomeOrNotJoined();
            });
        } catch (SQLException e) {
            throw failure("complete", e);
        }
        if (outcome == TransactionalCompletion.NOT_JOINED && warnedNotJoined.compareAndSet(false, true)) {
            LOG.warning("Idemkey records responses after their transaction, not in it: the DataSource's connection"
                    + " was not enlisted in the guarded method's JTA transaction, or the transaction is not READ"
                    + " COMMITTED (see README, The JDBC store)");
        }
        return outcome;
    }

    /** What one completing statement in the caller's transaction found: {@code outcome} null if it could not join. */
    private record InTransaction(TransactionalCompletion outcome, boolean readCommitted) {
        TransactionalCompletion outcomeOrNotJoined() {
            return outcome == null ? TransactionalCompletion.NOT_JOINED : outcome;
        }
    }

    private InTransaction completeInTransaction(Connection connection, int timeout, String recordKey, String ownerToken,
                                                byte[] response, Duration ttl) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(completeInTransaction)) {
            statement.setQueryTimeout(timeout);
            statement.setBytes(1, response);
            statement.setLong(2, millis(ttl));
            statement.setString(3, recordKey);
            statement.setString(4, ownerToken);
            try (ResultSet row = statement.executeQuery()) {
                row.next();
                boolean hasId = row.getBoolean(1);
                boolean readCommitted = row.getBoolean(2);
                if (!hasId || !readCommitted) {
                    return new InTransaction(null, readCommitted);
                }
                return new InTransaction(row.getBoolean(3) ? TransactionalCompletion.JOINED : TransactionalCompletion.LOST, true);
            }
        }
    }

    @Override
    public boolean joinsTransactions() {
        return true;
    }

    /**
     * Deletes up to {@code batchSize} expired rows, oldest first, in one short statement. Rows another
     * cleaner is deleting right now are skipped, so cleaners on several servers share the work.
     *
     * @return how many rows were deleted
     */
    public int deleteExpired(int batchSize) {
        try {
            return connections.outsideTransaction("delete expired rows", (connection, timeout) -> {
                try (PreparedStatement statement = connection.prepareStatement(deleteExpired)) {
                    statement.setQueryTimeout(timeout);
                    statement.setInt(1, batchSize);
                    return statement.executeUpdate();
                }
            });
        } catch (SQLException e) {
            throw failure("delete expired rows", e);
        }
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
    public Renewal renew(String recordKey, String ownerToken, Duration lockTtl) {
        return renew(List.of(new Lease(recordKey, ownerToken, lockTtl)))[0];
    }

    /** Every lease in one statement (one round trip), each compare-and-set on its own token. */
    @Override
    public Renewal[] renew(List<Lease> leases) {
        Renewal[] renewals = new Renewal[leases.size()];
        if (leases.isEmpty()) {
            return renewals;
        }
        try {
            return connections.outsideTransaction("renew", (connection, timeout) -> {
                try (PreparedStatement statement = connection.prepareStatement(renew)) {
                    statement.setQueryTimeout(timeout);
                    statement.setArray(1, connection.createArrayOf("text", leases.stream().map(Lease::recordKey).toArray()));
                    statement.setArray(2, connection.createArrayOf("text", leases.stream().map(Lease::ownerToken).toArray()));
                    statement.setArray(3, connection.createArrayOf("bigint",
                            leases.stream().map(lease -> millis(lease.lockTtl())).toArray()));
                    try (ResultSet rows = statement.executeQuery()) {
                        for (int i = 0; i < renewals.length; i++) {
                            rows.next();
                            int outcome = rows.getInt(2);
                            renewals[i] = outcome > 0 ? Renewal.RENEWED : outcome == 0 ? Renewal.UNKNOWN : Renewal.LOST;
                        }
                    }
                    return renewals;
                }
            });
        } catch (SQLException e) {
            throw failure("renew", e);
        }
    }

    @Override
    public boolean isAvailable() {
        return connections.isAvailable();
    }

    /** Stops the checkout watchdog; the data source belongs to the container (or the caller). */
    @Override
    public void close() {
        connections.close();
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

    /**
     * One statement outside any transaction, within the store's timeout (on another connection if the
     * one borrowed was broken); SQL errors classified by {@link #failure}.
     */
    private <T> T query(String sql, String operation, Parameters parameters, Rows<T> rows) {
        try {
            return connections.outsideTransaction(operation, (connection, timeout) -> {
                try (PreparedStatement statement = connection.prepareStatement(sql)) {
                    statement.setQueryTimeout(timeout);
                    parameters.set(statement);
                    try (ResultSet result = statement.executeQuery()) {
                        return rows.read(result);
                    }
                }
            });
        } catch (SQLException e) {
            throw failure(operation, e);
        }
    }

    private boolean update(String sql, String operation, Parameters parameters) {
        try {
            return connections.outsideTransaction(operation, (connection, timeout) -> {
                try (PreparedStatement statement = connection.prepareStatement(sql)) {
                    statement.setQueryTimeout(timeout);
                    parameters.set(statement);
                    return statement.executeUpdate() == 1;
                }
            });
        } catch (SQLException e) {
            throw failure(operation, e);
        }
    }

    /**
     * The one place store errors are classified: the database unreachable, timed out, or busy (the
     * store is unavailable: 503 or fail-open), anything else a defect.
     */
    private RuntimeException failure(String operation, SQLException e) {
        String state = sqlState(e);
        boolean unavailable = e instanceof SQLTransientException || StoreConnections.isBroken(e)
                || state.startsWith("08")      // connection exception
                || state.startsWith("53")      // insufficient resources
                || state.startsWith("57")      // operator intervention: query canceled (timeout), shutting down
                || state.startsWith("40")      // serialization failure, deadlock
                || state.equals("55P03")       // lock not available
                || state.equals("25006");      // read-only transaction: a standby, during a failover
        String message = "The idempotency table " + table + " could not " + operation + ": " + e.getMessage();
        return unavailable ? new StoreUnavailableException(message, e) : new IllegalStateException(message, e);
    }

    /** The SQL state of the exception or, where it has none (a container's wrapper), of the first it wraps that has one. */
    private static String sqlState(SQLException failure) {
        for (Throwable e = failure; e != null; e = e.getCause() == e ? null : e.getCause()) {
            if (e instanceof SQLException sql && sql.getSQLState() != null) {
                return sql.getSQLState();
            }
        }
        return "";
    }

    /** Serialization failure or deadlock (class 40): the statement may simply run again. */
    private static boolean isConflict(Throwable cause) {
        return cause instanceof SQLException e && sqlState(e).startsWith("40");
    }

    private static long millis(Duration duration) {
        return Math.max(1, duration.toMillis());
    }
}
