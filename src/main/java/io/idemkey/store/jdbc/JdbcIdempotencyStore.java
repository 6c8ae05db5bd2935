package io.idemkey.store.jdbc;

import io.idemkey.spi.AcquireResult;
import io.idemkey.spi.IdempotencyStore;
import io.idemkey.spi.Lease;
import io.idemkey.spi.RateLimit;
import io.idemkey.spi.Renewal;
import io.idemkey.spi.StoreInspection;
import io.idemkey.spi.StoreUnavailableException;
import io.idemkey.spi.TransactionalCompletion;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientException;
import java.time.Duration;
import java.util.List;
import java.util.function.IntFunction;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Logger;
import java.util.regex.Pattern;

/**
 * The {@link IdempotencyStore} in a relational table, through the application's {@link DataSource}:
 * on PostgreSQL ({@link PostgresDialect}) or MariaDB ({@link MariaDbDialect}), whichever the
 * DataSource leads to (no setting: the dialect is taken from the connection, the first time the
 * database answers). Every operation is one statement, or one round trip; time is the database's,
 * so every server agrees on expiry. A row whose {@code expires_at} has passed counts as absent and
 * is taken over atomically by the next acquire; {@link #deleteExpired} removes such rows in batches.
 * A duplicate, a replay or a conflict never waits for another request's transaction (one that holds
 * the row while it commits the record with its effects, {@link #completeInTransaction}).
 *
 * <p>Complete, release and renew are compare-and-set on the owner token. Every call is bounded by the
 * store's timeout, the wait for a pooled connection included ({@link StoreConnections}). Outside a
 * JTA transaction each runs on its own connection in auto-commit mode (as a container's DataSource
 * hands them out when no transaction is active).
 */
public final class JdbcIdempotencyStore implements IdempotencyStore, StoreInspection {

    private static final Logger LOG = Logger.getLogger(JdbcIdempotencyStore.class.getName());

    /** A table name, optionally schema-qualified: SQL identifiers only, never text from a request. */
    private static final Pattern TABLE = Pattern.compile("([A-Za-z_][A-Za-z0-9_]{0,62}\\.)?[A-Za-z_][A-Za-z0-9_]{0,62}");
    /**
     * The pauses before acquire runs again, when concurrent writers kept it from seeing the row (again
     * at once) or a transaction holds an expired row: a cleanup's DELETE for a few milliseconds, or
     * the owner committing its record. Bounded: a row held longer is reported in progress.
     */
    private static final long[] ACQUIRE_PAUSES_MS = {0, 5, 25, 100, 250};
    /**
     * Counting attempts that meet a held row before it is answered as last committed: the two
     * attempts of 0 and 5 ms wait out another request's statement (a storm of retries of one key).
     */
    private static final int HELD_COUNTING_ATTEMPTS = 2;

    private final StoreConnections connections;
    private final String table;
    private final RecordInspection inspection;
    private final TableSetup setup;
    private final AtomicBoolean warnedNotJoined = new AtomicBoolean();
    private final KeptConnections keptInTransaction = new KeptConnections();
    /** The table could not be created at start-up (the database was away): created on first use. */
    private volatile boolean tablePending;
    /** Requests are counted (a rate limit is configured): releases keep the row for its count. */
    private volatile boolean countingRequests;
    /** The database's dialect, known from the first connection that answered. */
    private volatile Dialect dialect;
    /** The record operations' statements in that dialect. */
    private volatile RecordStatements statements;

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
        this.inspection = new RecordInspection(table);
        this.setup = new TableSetup(table);
    }

    /**
     * The table and its expiry index for a database, as {@code idempotency.jdbc.create-table} creates
     * them (docs/jdbc.md has them too).
     *
     * @param database {@code PostgreSQL} or {@code MariaDB}
     */
    public static String ddl(String database, String table) {
        requireTableName(table);
        return switch (database) {
            case "PostgreSQL" -> PostgresDialect.ddl(table);
            case "MariaDB" -> MariaDbDialect.ddl(table);
            default -> throw new IllegalArgumentException("no such database here: " + database + "; supported: "
                    + Dialect.SUPPORTED);
        };
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
     * @throws StoreUnavailableException    if the database cannot be reached (creation is then pending)
     * @throws UnsupportedDatabaseException if the DataSource leads to a database the store does not support
     */
    public void createTable() {
        tablePending = true;
        createPendingTable();
    }

    /**
     * Checks a table the application manages itself ({@code idempotency.jdbc.create-table=false}):
     * it must exist and have every column this version writes.
     *
     * @return what is missing (naming the statement that adds it), or empty if the table is complete
     * @throws StoreUnavailableException    if the database cannot be reached now (checked on no later call)
     * @throws UnsupportedDatabaseException if the DataSource leads to a database the store does not support
     */
    public java.util.Optional<String> missingFromTable() {
        return outside("read its columns", (connection, timeout) -> setup.missing(connection, dialect(connection)));
    }

    /** The database the store found behind its DataSource ({@code PostgreSQL 15.19}), or empty until it answered. */
    public java.util.Optional<String> database() {
        Dialect known = dialect;
        return known == null ? java.util.Optional.empty() : java.util.Optional.of(known.database());
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
                connections.outsideTransaction("create the table " + table, (connection, timeout) -> {
                    setup.create(connection, timeout, dialect(connection));
                    return null;
                });
                return;
            } catch (SQLException e) {
                // Servers (or applications) starting at once: "IF NOT EXISTS" does not stop one from
                // colliding with another's uncommitted catalog rows. Once the other committed, the table is there.
                if (dialect == null || !dialect.isCreationCollision(e) || attempt == 5 || !pause(100L * attempt)) {
                    throw failure("create the table " + table, e);
                }
            }
        }
    }

    /** The dialect, taken from the connection's metadata the first time. */
    private Dialect dialect(Connection connection) throws SQLException {
        Dialect known = dialect;
        if (known == null) {
            known = Dialect.of(connection.getMetaData(), table);
            statements = new RecordStatements(known, table);
            dialect = known;
            Dialect chosen = known;
            LOG.info(() -> "Idemkey's table " + table + " is in " + chosen.database());
        }
        return known;
    }

    /** The record operations' statements, in the dialect taken from the connection the first time. */
    private RecordStatements statements(Connection connection) throws SQLException {
        dialect(connection);
        return statements;
    }

    @Override
    public AcquireResult acquire(String recordKey, byte[] fingerprint, String ownerToken, Duration lockTtl) {
        createPendingTable();
        return acquireUntilAnswered(attempt -> (connection, timeout) ->
                statements(connection).acquire(connection, timeout, recordKey, fingerprint, ownerToken, lockTtl));
    }

    /**
     * Runs an acquire (the work of each attempt, by its number from 0) until it answers, after the
     * {@link #ACQUIRE_PAUSES_MS pauses}: again where it could not tell (null: another request inserted
     * or took over the key while the statement ran, or a transaction holds the row) or met a conflict
     * (a serialization failure or deadlock with another writer of the key). In progress if it never
     * answered: still racing with other writers of this key, or held all along.
     */
    private AcquireResult acquireUntilAnswered(IntFunction<StoreConnections.Work<AcquireResult>> attempts) {
        for (int attempt = 0; attempt <= ACQUIRE_PAUSES_MS.length; attempt++) {
            if (attempt > 0 && !pause(ACQUIRE_PAUSES_MS[attempt - 1])) {
                break;
            }
            AcquireResult result;
            try {
                result = outside("acquire", attempts.apply(attempt));
            } catch (StoreUnavailableException e) {
                if (attempt == ACQUIRE_PAUSES_MS.length || !(e.getCause() instanceof SQLException sql)
                        || dialect == null || !dialect.isConflict(sql)) {
                    throw e;
                }
                continue;
            }
            if (result != null) {
                return result;
            }
        }
        return new AcquireResult.InProgress(Duration.ZERO);
    }

    /**
     * Acquire that counts the request against the key's rate limit in the same round trip. The count
     * lives on the record's row, so that it outlives a release (from the first counted request on,
     * a release expires the row instead of deleting it, and the cleanup deletes it once its window
     * ended too). The statement runs again only where it counted nothing (a row another request's
     * statement or a transaction held, a conflict); from the third attempt on a row still held is
     * answered as last committed, uncounted, and refused once its count reached the limit. An acquire
     * sent again after its reply was lost finds its own record, which is not counted again.
     */
    @Override
    public AcquireResult acquire(String recordKey, byte[] fingerprint, String ownerToken, Duration lockTtl,
                                 RateLimit limit) {
        countingRequests = true;
        createPendingTable();
        return acquireUntilAnswered(attempt -> (connection, timeout) -> statements(connection).acquireCounting(connection,
                timeout, recordKey, fingerprint, ownerToken, lockTtl, limit, attempt >= HELD_COUNTING_ATTEMPTS));
    }

    @Override
    public boolean countsRequests() {
        return true;
    }

    /**
     * Requests are counted (a rate limit is configured): from now on a release keeps the row, expired,
     * for its count. Called at start-up; the first counted acquire also switches it on.
     */
    public void keepCountsOnRelease() {
        countingRequests = true;
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

    @Override
    public boolean complete(String recordKey, String ownerToken, byte[] response, Duration ttl) {
        return outside("complete", (connection, timeout) ->
                statements(connection).complete(connection, timeout, recordKey, ownerToken, response, ttl));
    }

    /**
     * The completing statement on the connection the container enlists in the caller's JTA
     * transaction (a transactional DataSource, the default of Payara's JDBC resources and Liberty's
     * {@code <dataSource>}, hands out the transaction's connection while one is active). The dialect
     * checks that it really runs in that transaction; whatever the transaction wrote, or will write
     * (JPA at flush), commits with it.
     */
    @Override
    public TransactionalCompletion completeInTransaction(String recordKey, String ownerToken, byte[] response,
                                                         Duration ttl) {
        createPendingTable();
        TransactionalCompletion outcome;
        try {
            outcome = connections.inTransaction("complete", (connection, timeout) ->
                    statements(connection).completeInTransaction(connection, timeout, recordKey, ownerToken, response, ttl),
                    joined -> joined == TransactionalCompletion.JOINED, connection -> keptInTransaction.keep(recordKey, ownerToken, connection));
        } catch (SQLException e) {
            throw failure("complete", e);
        }
        if (outcome == TransactionalCompletion.NOT_JOINED && warnedNotJoined.compareAndSet(false, true)) {
            LOG.warning("Idemkey records responses after their transaction, not in it: the DataSource's connection"
                    + " was not enlisted in the guarded method's JTA transaction, or (PostgreSQL) the transaction is not"
                    + " READ COMMITTED (see docs/jdbc.md, Exactly-once effects)");
        }
        return outcome;
    }

    @Override
    public boolean joinsTransactions() {
        return true;
    }

    /**
     * On the connection {@link #completeInTransaction} wrote the record with, kept open until the
     * transaction ends: as it commits, a container may hand out no connection in it any more
     * (Payara's are then in auto-commit mode). One {@code UPDATE}, fenced on the owner token; the
     * transaction holds the row since it wrote it.
     */
    @Override
    public boolean replaceResponseInTransaction(String recordKey, String ownerToken, byte[] response) {
        try {
            Connection kept = keptInTransaction.get(recordKey, ownerToken);
            if (kept == null) {
                return false;
            }
            return connections.onKept(kept, (connection, timeout) -> statements(connection).replaceResponse(connection,
                    timeout, recordKey, ownerToken, response, false));
        } catch (SQLException e) {
            throw failure("replace the recorded response", e);
        }
    }

    @Override
    public void transactionEnded(String recordKey, String ownerToken) {
        keptInTransaction.ended(recordKey, ownerToken);
    }

    @Override
    public boolean replaceResponse(String recordKey, String ownerToken, byte[] response) {
        return outside("replace the recorded response", (connection, timeout) -> statements(connection).replaceResponse(
                connection, timeout, recordKey, ownerToken, response, true));
    }

    /**
     * Deletes up to {@code batchSize} expired rows, oldest first, in one short statement. Rows another
     * cleaner is deleting right now are skipped, so cleaners on several servers share the work.
     *
     * @return how many rows were deleted
     */
    public int deleteExpired(int batchSize) {
        return outside("delete expired rows", (connection, timeout) ->
                statements(connection).deleteExpired(connection, timeout, batchSize));
    }

    @Override
    public boolean release(String recordKey, String ownerToken) {
        boolean keepCount = countingRequests;
        return outside("release", (connection, timeout) ->
                statements(connection).release(connection, timeout, recordKey, ownerToken, keepCount));
    }

    @Override
    public Renewal renew(String recordKey, String ownerToken, Duration lockTtl) {
        return renew(List.of(new Lease(recordKey, ownerToken, lockTtl)))[0];
    }

    /** Every lease of the batch in as few round trips as the database allows (PostgreSQL: one statement). */
    @Override
    public Renewal[] renew(List<Lease> leases) {
        if (leases.isEmpty()) {
            return new Renewal[0];
        }
        return outside("renew", (connection, timeout) -> statements(connection).renew(connection, timeout, leases));
    }

    @Override
    public boolean isAvailable() {
        return connections.isAvailable();
    }

    /** Stops the checkout watchdog; the data source belongs to the container (or the caller). */
    @Override
    public void close() {
        keptInTransaction.closeAll();
        connections.close();
    }

    @Override
    public String toString() {
        return "JdbcIdempotencyStore[" + table + "]";
    }

    /**
     * One operation outside any transaction, within the store's timeout (on another connection if
     * the one borrowed was broken); SQL errors classified by {@link #failure}.
     */
    private <T> T outside(String operation, StoreConnections.Work<T> work) {
        try {
            return connections.outsideTransaction(operation, work);
        } catch (SQLException e) {
            throw failure(operation, e);
        }
    }

    /**
     * The one place store errors are classified: the database unreachable, timed out, or busy (the
     * store is unavailable: 503 or fail-open), anything else a defect.
     */
    private RuntimeException failure(String operation, SQLException e) {
        Dialect known = dialect;
        boolean unavailable = e instanceof SQLTransientException || StoreConnections.isBroken(e)
                || (known != null && known.isUnavailable(e));
        String message = "The idempotency table " + table + " could not " + operation + ": " + e.getMessage();
        return unavailable ? new StoreUnavailableException(message, e) : new IllegalStateException(message, e);
    }

    @Override
    public java.util.Optional<StoredRecord> inspect(String recordKey) {
        return outside("inspect", (connection, timeout) -> inspection.inspect(connection, timeout, dialect(connection),
                recordKey));
    }

    /**
     * A {@code DELETE} of the record if it is alive and completed (or forced), then, where it deleted
     * nothing, a look at why: two statements; a record that changes between them is reported as the
     * second saw it.
     */
    @Override
    public Purge purge(String recordKey, boolean force) {
        return outside("purge", (connection, timeout) -> inspection.purge(connection, timeout, dialect(connection),
                recordKey, force));
    }

    /**
     * One indexed query on the rows in progress by {@code expires_at} (the {@code <table>_in_progress}
     * index the DDL creates: partial on PostgreSQL, {@code (completed, expires_at)} on MariaDB): the
     * live in-progress rows in {@code expires_at}, then key, order, after the cursor
     * ({@code <expires_at in microseconds>:<record key>}), at most {@code limit}. A lease
     * renewed while the pages are walked moves its row later: it may be seen twice, never missed.
     */
    @Override
    public Page inProgress(String keyPrefix, String cursor, int limit) {
        StoreInspection.checkLimit(limit);
        RecordInspection.Cursor after = RecordInspection.Cursor.parse(cursor);
        return outside("list keys in progress", (connection, timeout) -> inspection.inProgress(connection, timeout,
                dialect(connection), keyPrefix, after, limit));
    }
}
