package io.idemkey.store.jdbc;

import java.sql.SQLException;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

import static io.idemkey.store.jdbc.Dialect.Param.BATCH;
import static io.idemkey.store.jdbc.Dialect.Param.FINGERPRINT;
import static io.idemkey.store.jdbc.Dialect.Param.KEY;
import static io.idemkey.store.jdbc.Dialect.Param.LEASE;
import static io.idemkey.store.jdbc.Dialect.Param.OWNER;
import static io.idemkey.store.jdbc.Dialect.Param.PERMITS;
import static io.idemkey.store.jdbc.Dialect.Param.RESPONSE;
import static io.idemkey.store.jdbc.Dialect.Param.TTL;
import static io.idemkey.store.jdbc.Dialect.Param.WINDOW;

/**
 * The JDBC store's statements on MariaDB (InnoDB), on the database's clock ({@code UTC_TIMESTAMP(6)},
 * the same for every statement whatever the session's time zone, and constant within one).
 *
 * <p>Acquire is one statement: an {@code INSERT ... ON DUPLICATE KEY UPDATE} that takes over only an
 * expired row (or its own, sent again), {@code RETURNING} the row as it is after it, so a first
 * execution, a replay, a conflict and a mismatch are each one round trip. It takes the row's lock
 * for the statement's microseconds and never waits for another transaction's: it runs with
 * {@code innodb_lock_wait_timeout=0}, and a row another transaction holds (its owner committing the
 * record with its effects) is read instead without a lock, as the last committed state, one round
 * trip more. Every statement carries its own limits ({@code SET STATEMENT ... FOR}): MariaDB's
 * driver would otherwise put its statement timeout in front of the statement the same way.
 *
 * <p>The record is completed inside the caller's transaction only if the connection is in one
 * ({@code @@in_transaction}, which is 1 from the transaction's first statement on, this one
 * included, and 0 in auto-commit mode): whatever the transaction wrote, or will write (JPA at
 * flush), joins it. InnoDB's writes read the latest committed row whatever the isolation level, so
 * REPEATABLE READ, MariaDB's default, is fine: the lease renewals committed since the transaction
 * began are seen.
 */
final class MariaDbDialect implements Dialect {

    /** MariaDB's "lock wait timeout exceeded". */
    private static final int LOCK_WAIT_TIMEOUT = 1205;
    private static final int DEADLOCK = 1213;

    private final String table;
    private final String database;
    private final String acquire;
    private final String acquireCounting;
    private final String lastCommitted;
    private final String complete;
    private final String completeInTransaction;
    private final String completedByOwner;
    private final String release;
    private final String expire;
    private final String free;
    private final String renew;
    private final String heldLease;
    private final String deleteExpired;

    MariaDbDialect(String table, String database) {
        this.table = table;
        this.database = database;
        // The takeover is decided once, on the row as it was (expired, or this very owner's in progress:
        // an acquire sent again), and kept in a session variable for the assignments after it (MariaDB
        // assigns in order, each seeing the columns the ones before changed).
        this.acquire = """
                SET STATEMENT innodb_lock_wait_timeout = 0, max_statement_time = %2$s FOR
                INSERT INTO %1$s (record_key, completed, fingerprint, owner_token, response, expires_at)
                VALUES (?, FALSE, ?, ?, NULL, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND)
                ON DUPLICATE KEY UPDATE
                  owner_token = IF(@idemkey_take := (expires_at <= UTC_TIMESTAMP(6)
                                                     OR (NOT completed AND owner_token = VALUE(owner_token))),
                                   VALUE(owner_token), owner_token),
                  completed   = IF(@idemkey_take, FALSE, completed),
                  fingerprint = IF(@idemkey_take, VALUE(fingerprint), fingerprint),
                  response    = IF(@idemkey_take, NULL, response),
                  expires_at  = IF(@idemkey_take, VALUE(expires_at), expires_at)
                RETURNING owner_token = ? AND NOT completed, completed, fingerprint, IF(completed AND fingerprint = ?, response, NULL),
                          TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at)
                """.formatted(table, "%1$d");
        // With a rate limit: the request is counted on the record's row first (not an acquire sent again
        // by the same owner), the window renewed once over,
        // and the row taken over only within the limit; the count outlives a release (the row is then
        // expired, not deleted). New rows start with a count of 1.
        this.acquireCounting = """
                SET STATEMENT innodb_lock_wait_timeout = 0, max_statement_time = %2$s FOR
                INSERT INTO %1$s (record_key, completed, fingerprint, owner_token, response, expires_at, requests, window_ends_at)
                VALUES (?, FALSE, ?, ?, NULL, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, 1, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND)
                ON DUPLICATE KEY UPDATE
                  requests       = IF(@idemkey_same := (NOT completed AND owner_token = VALUE(owner_token)),
                                      IF(window_ends_at IS NULL OR window_ends_at <= UTC_TIMESTAMP(6), 1, COALESCE(requests, 1)),
                                      IF(window_ends_at IS NULL OR window_ends_at <= UTC_TIMESTAMP(6), 1, requests + 1)),
                  window_ends_at = IF(window_ends_at IS NULL OR window_ends_at <= UTC_TIMESTAMP(6), VALUE(window_ends_at),
                                      window_ends_at),
                  owner_token    = IF(@idemkey_take := ((expires_at <= UTC_TIMESTAMP(6) OR @idemkey_same) AND requests <= ?),
                                      VALUE(owner_token), owner_token),
                  completed      = IF(@idemkey_take, FALSE, completed),
                  fingerprint    = IF(@idemkey_take, VALUE(fingerprint), fingerprint),
                  response       = IF(@idemkey_take, NULL, response),
                  expires_at     = IF(@idemkey_take, VALUE(expires_at), expires_at)
                RETURNING owner_token = ? AND NOT completed, completed, fingerprint, IF(completed AND fingerprint = ?, response, NULL),
                          TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at), requests > ?,
                          TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), window_ends_at)
                """.formatted(table, "%1$d");
        // The row as last committed, without a lock (a consistent read): for a row a transaction holds.
        this.lastCommitted = """
                SET STATEMENT max_statement_time = %2$s FOR
                SELECT expires_at <= UTC_TIMESTAMP(6) OR (NOT completed AND owner_token = ?), completed, fingerprint,
                       IF(completed AND fingerprint = ?, response, NULL), TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at),
                       COALESCE(requests, 0), COALESCE(TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), window_ends_at), 0)
                  FROM %1$s WHERE record_key = ?
                """.formatted(table, "%1$d");
        // Assignments in order: response and expires_at decided on "completed" before it is set.
        String completing = """
                SET STATEMENT innodb_lock_wait_timeout = %2$s, max_statement_time = %2$s FOR
                UPDATE %1$s SET response   = IF(completed, response, ?),
                                expires_at = IF(completed, expires_at, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND),
                                completed  = TRUE
                 WHERE record_key = ? AND owner_token = ? AND (completed OR expires_at > UTC_TIMESTAMP(6))
                """.formatted(table, "%1$d");
        this.complete = completing;
        this.completeInTransaction = completing.strip() + " AND @@in_transaction = 1\n";
        // A completion that changed nothing: one sent again after its reply was lost (or a driver that
        // counts changed rows, not matched ones), or no transaction, or a lost lease.
        this.completedByOwner = """
                SET STATEMENT max_statement_time = %2$s FOR
                SELECT @@in_transaction, EXISTS (SELECT 1 FROM %1$s WHERE record_key = ? AND owner_token = ? AND completed)
                """.formatted(table, "%1$d");
        this.release = """
                SET STATEMENT innodb_lock_wait_timeout = %2$s, max_statement_time = %2$s FOR
                DELETE FROM %1$s WHERE record_key = ? AND owner_token = ? AND NOT completed
                """.formatted(table, "%1$d");
        this.expire = """
                SET STATEMENT innodb_lock_wait_timeout = %2$s, max_statement_time = %2$s FOR
                UPDATE %1$s SET expires_at = UTC_TIMESTAMP(6) - INTERVAL 1 MICROSECOND, response = NULL
                 WHERE record_key = ? AND owner_token = ? AND NOT completed
                """.formatted(table, "%1$d");
        this.free = """
                SET STATEMENT max_statement_time = %2$s FOR
                SELECT NOT EXISTS (SELECT 1 FROM %1$s WHERE record_key = ? AND expires_at > UTC_TIMESTAMP(6))
                """.formatted(table, "%1$d");
        // A row a transaction holds, as last committed: ours and alive (unknown), or not (lost).
        this.heldLease = """
                SET STATEMENT max_statement_time = %2$s FOR
                SELECT NOT completed AND owner_token = ? AND expires_at > UTC_TIMESTAMP(6) FROM %1$s WHERE record_key = ?
                """.formatted(table, "%1$d");
        // One lease per statement; a row a transaction holds fails at once (lock wait timeout 0).
        this.renew = """
                SET STATEMENT innodb_lock_wait_timeout = 0, max_statement_time = %2$s FOR
                UPDATE %1$s SET expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND
                 WHERE record_key = ? AND owner_token = ? AND NOT completed AND expires_at > UTC_TIMESTAMP(6)
                """.formatted(table, "%1$d");
        // Locks only expired rows, skipping those another cleaner or an acquire holds (joined as a derived
        // table: MariaDB deletes from a table it reads only through one, and an IN (...) of it would be
        // a dependent subquery, a scan of the table per row); checks expiry again on the locked row.
        this.deleteExpired = """
                SET STATEMENT max_statement_time = %2$s FOR
                DELETE r FROM %1$s r JOIN (
                    SELECT record_key FROM %1$s WHERE expires_at <= UTC_TIMESTAMP(6)
                       AND (window_ends_at IS NULL OR window_ends_at <= UTC_TIMESTAMP(6)) ORDER BY expires_at LIMIT ?
                       FOR UPDATE SKIP LOCKED
                  ) AS expired USING (record_key)
                 WHERE r.expires_at <= UTC_TIMESTAMP(6) AND (r.window_ends_at IS NULL OR r.window_ends_at <= UTC_TIMESTAMP(6))
                """.formatted(table, "%1$d");
    }

    /** The table and its expiry index (docs/jdbc.md has it too): InnoDB, keys in ASCII compared byte by byte. */
    static String ddl(String table) {
        String index = table.substring(table.indexOf('.') + 1) + "_expires_at";
        return """
                CREATE TABLE IF NOT EXISTS %1$s (
                  record_key  VARCHAR(3072) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
                  completed   BOOLEAN       NOT NULL,
                  fingerprint VARBINARY(64) NOT NULL,
                  owner_token VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
                  response    MEDIUMBLOB,
                  expires_at  DATETIME(6)   NOT NULL,
                  requests       INT,
                  window_ends_at DATETIME(6),
                  KEY %2$s (expires_at)
                ) ENGINE = InnoDB;
                CREATE INDEX IF NOT EXISTS %3$s ON %1$s (completed, expires_at)
                """.formatted(table, index, table.substring(table.indexOf('.') + 1) + "_in_progress");
    }

    @Override
    public String database() {
        return database;
    }

    @Override
    public String ddl() {
        return ddl(table);
    }

    @Override
    public String hasIndexSql() {
        return "SELECT 1 FROM information_schema.statistics"
                + " WHERE table_schema = COALESCE(?, DATABASE()) AND table_name = ? AND index_name = ? LIMIT 1";
    }

    /** The table's schema (null: the connection's database), its name, the index's name. */
    @Override
    public List<String> hasIndexParameters(String index) {
        int dot = table.indexOf('.');
        return Arrays.asList(dot < 0 ? null : table.substring(0, dot), table.substring(dot + 1), index);
    }

    @Override
    public String addCountColumns() {
        return "ALTER TABLE %s ADD COLUMN IF NOT EXISTS requests INT, ADD COLUMN IF NOT EXISTS window_ends_at DATETIME(6)"
                .formatted(table);
    }

    @Override
    public boolean isMissingTable(SQLException e) {
        return SqlStates.vendorCode(e) == 1146;
    }

    @Override
    public boolean isMissingColumn(SQLException e) {
        return SqlStates.vendorCode(e) == 1054;
    }

    @Override
    public Sql acquire() {
        return new Sql(acquire, KEY, FINGERPRINT, OWNER, LEASE, OWNER, FINGERPRINT);
    }

    /** The statement waits for no lock: a row a transaction holds fails it, and is read as last committed. */
    @Override
    public boolean acquireReadsHeldRow() {
        return true;
    }

    @Override
    public Sql acquireCounting() {
        return new Sql(acquireCounting, KEY, FINGERPRINT, OWNER, LEASE, WINDOW, PERMITS, OWNER, FINGERPRINT, PERMITS);
    }

    @Override
    public Sql lastCommitted() {
        return new Sql(lastCommitted, OWNER, FINGERPRINT, KEY);
    }

    /** Lock wait timeout exceeded: the statements wait 0 s for a row another transaction holds. */
    @Override
    public boolean isHeld(SQLException e) {
        return SqlStates.vendorCode(e) == LOCK_WAIT_TIMEOUT;
    }

    @Override
    public Sql complete() {
        return new Sql(complete, RESPONSE, TTL, KEY, OWNER);
    }

    @Override
    public TransactionProbe transactionProbe() {
        return TransactionProbe.IN_TRANSACTION_FLAG;
    }

    @Override
    public Sql completeInTransaction() {
        return new Sql(completeInTransaction, RESPONSE, TTL, KEY, OWNER);
    }

    @Override
    public Sql completedByOwner() {
        return new Sql(completedByOwner, KEY, OWNER);
    }

    @Override
    public Sql release() {
        return new Sql(release, KEY, OWNER);
    }

    @Override
    public Sql expire() {
        return new Sql(expire, KEY, OWNER);
    }

    @Override
    public Sql free() {
        return new Sql(free, KEY);
    }

    /** One statement per lease; a row a transaction holds is answered at once ({@link #heldLease}). */
    @Override
    public Sql renew() {
        return new Sql(renew, LEASE, KEY, OWNER);
    }

    @Override
    public Sql heldLease() {
        return new Sql(heldLease, OWNER, KEY);
    }

    @Override
    public Sql deleteExpired() {
        return new Sql(deleteExpired, BATCH);
    }

    /** {@code SET STATEMENT ... FOR}: MariaDB's driver would otherwise put its statement timeout in front of the statement the same way. */
    @Override
    public boolean limitsInStatement() {
        return true;
    }

    /** Whole microseconds. */
    @Override
    public long amount(Duration duration) {
        return Math.max(1000, duration.toNanos() / 1000);
    }

    /** Microseconds, rounded up to milliseconds. */
    @Override
    public long millis(long amount) {
        return (amount + 999) / 1000;
    }

    @Override
    public boolean isConflict(SQLException e) {
        return SqlStates.vendorCode(e) == DEADLOCK || SqlStates.of(e).equals("40001");
    }

    /**
     * Lock waits, deadlocks, a statement interrupted by its time limit or killed, too many
     * connections, a server in read-only mode (a replica, during a failover).
     */
    @Override
    public boolean isUnavailable(SQLException e) {
        int code = SqlStates.vendorCode(e);
        String state = SqlStates.of(e);
        return code == LOCK_WAIT_TIMEOUT || code == DEADLOCK || code == 1040 || code == 1969 || code == 1317
                || code == 1927 || code == 1290 || code == 1836 || state.startsWith("40") || state.equals("70100");
    }

    @Override
    public boolean isCreationCollision(SQLException e) {
        return SqlStates.vendorCode(e) == 1050 || isConflict(e);
    }

    @Override
    public String nowSql() {
        return "UTC_TIMESTAMP(6)";
    }

    @Override
    public String millisLeftSql() {
        return "TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) DIV 1000";
    }

    @Override
    public String expiresMicrosSql() {
        return "TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', expires_at)";
    }

    @Override
    public String fromMicrosSql() {
        return "TIMESTAMPADD(MICROSECOND, ?, '1970-01-01 00:00:00')";
    }
}
