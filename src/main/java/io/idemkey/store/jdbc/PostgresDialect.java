package io.idemkey.store.jdbc;

import java.sql.SQLException;
import java.time.Duration;
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
 * The JDBC store's statements on PostgreSQL: one statement per operation, on the database's clock
 * ({@code now()}). Acquire reads the row first and writes only when there is nothing alive to
 * report: a replay, a conflict or a mismatch reads without taking a lock, so a duplicate never waits
 * for another request's transaction (one that holds the row while it commits the record with its
 * effects). It inserts when no row is visible, or takes over an expired row, skipping one a
 * transaction holds ({@code SKIP LOCKED}).
 */
final class PostgresDialect implements Dialect {

    private final String table;
    private final String database;
    private final String acquire;
    private final String acquireCounting;
    private final String lastCommitted;
    private final String complete;
    private final String completeInTransaction;
    private final String release;
    private final String expire;
    private final String renew;
    private final String deleteExpired;

    PostgresDialect(String table, String database) {
        this.table = table;
        this.database = database;
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
        // With a rate limit: the request is counted on the record's row (so that the count outlives a
        // release: the row is then expired, not deleted), and the row taken over only within the
        // limit. Every request writes the row, so a row a transaction holds is not waited for but
        // fails the statement at once (NOWAIT: 55P03), and is read as last committed (lastCommitted).
        // An acquire of the same owner sent again (its reply lost) is not counted again.
        String same = "NOT r.completed AND r.owner_token = EXCLUDED.owner_token";
        String newWindow = "(r.window_ends_at IS NULL OR r.window_ends_at <= now())";
        String counted = "CASE WHEN %s THEN 1 WHEN (%s) THEN COALESCE(r.requests, 1) ELSE r.requests + 1 END"
                .formatted(newWindow, same);
        String take = "((r.expires_at <= now() OR (%s)) AND %s <= (SELECT lim FROM p))".formatted(same, counted);
        this.acquireCounting = """
                WITH p AS (
                  SELECT ?::TEXT AS k, ?::BYTEA AS f, ?::TEXT AS o, ?::BIGINT * INTERVAL '1 millisecond' AS lease,
                         ?::INTEGER AS lim, ?::BIGINT * INTERVAL '1 millisecond' AS win
                ), held AS (
                  SELECT 1 FROM %1$s r JOIN p ON r.record_key = p.k FOR UPDATE OF r NOWAIT
                ), upserted AS (
                  INSERT INTO %1$s AS r (record_key, completed, fingerprint, owner_token, response, expires_at,
                                         requests, window_ends_at)
                  SELECT p.k, FALSE, p.f, p.o, NULL, now() + p.lease, 1, now() + p.win FROM p
                   WHERE (SELECT count(*) FROM held) >= 0
                  ON CONFLICT (record_key) DO UPDATE SET
                    requests = %2$s,
                    window_ends_at = CASE WHEN %3$s THEN EXCLUDED.window_ends_at ELSE r.window_ends_at END,
                    completed = CASE WHEN %4$s THEN FALSE ELSE r.completed END,
                    fingerprint = CASE WHEN %4$s THEN EXCLUDED.fingerprint ELSE r.fingerprint END,
                    owner_token = CASE WHEN %4$s THEN EXCLUDED.owner_token ELSE r.owner_token END,
                    response = CASE WHEN %4$s THEN NULL ELSE r.response END,
                    expires_at = CASE WHEN %4$s THEN EXCLUDED.expires_at ELSE r.expires_at END
                  RETURNING r.owner_token = (SELECT o FROM p) AND NOT r.completed, r.completed, r.fingerprint,
                            CASE WHEN r.completed AND r.fingerprint = (SELECT f FROM p) THEN r.response END,
                            CEIL(EXTRACT(EPOCH FROM (r.expires_at - now())) * 1000)::BIGINT,
                            r.requests > (SELECT lim FROM p),
                            CEIL(EXTRACT(EPOCH FROM (r.window_ends_at - now())) * 1000)::BIGINT
                )
                SELECT * FROM upserted
                """.formatted(table, counted, newWindow, take);
        // The row as last committed, without a lock: for a row a transaction holds; its count and the
        // time left in its window too.
        this.lastCommitted = """
                SELECT r.expires_at <= now() OR (NOT r.completed AND r.owner_token = ?), r.completed, r.fingerprint,
                       CASE WHEN r.completed AND r.fingerprint = ? THEN r.response END,
                       CEIL(EXTRACT(EPOCH FROM (r.expires_at - now())) * 1000)::BIGINT,
                       COALESCE(r.requests, 0), COALESCE(CEIL(EXTRACT(EPOCH FROM (r.window_ends_at - now())) * 1000)::BIGINT, 0)
                  FROM %1$s r WHERE r.record_key = ?
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
        // A release where requests are counted: the row stays, expired (absent for every operation), so
        // that its count goes on to the end of its window; the cleanup deletes it after both.
        this.expire = """
                WITH released AS (
                  UPDATE %1$s SET expires_at = now() - INTERVAL '1 millisecond', response = NULL
                   WHERE record_key = ? AND owner_token = ? AND NOT completed RETURNING 1
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
        // again on the locked row (an acquire may have taken it over in between). The batch is an
        // array, computed once: as "IN (SELECT ... LIMIT ?)" the planner may rescan the subquery for
        // each row of a nested loop, and each rescan skips the rows this statement has deleted and
        // locks the next ones: the statement would delete more than the batch.
        this.deleteExpired = """
                DELETE FROM %1$s WHERE record_key = ANY (ARRAY(
                  SELECT record_key FROM %1$s WHERE expires_at <= now()
                     AND (window_ends_at IS NULL OR window_ends_at <= now()) ORDER BY expires_at LIMIT ?
                     FOR UPDATE SKIP LOCKED
                )) AND expires_at <= now() AND (window_ends_at IS NULL OR window_ends_at <= now())
                """.formatted(table);
    }

    /**
     * The table and its indexes (docs/jdbc.md has them too). The second index holds only the rows in
     * progress ({@code WHERE NOT completed}: a completion takes its row out of it, with one index
     * entry fewer to write than an index over every row), for the operators' list of them.
     */
    static String ddl(String table) {
        String index = table.substring(table.indexOf('.') + 1) + "_expires_at";
        return """
                CREATE TABLE IF NOT EXISTS %1$s (
                  record_key  TEXT COLLATE "C" NOT NULL PRIMARY KEY,
                  completed   BOOLEAN          NOT NULL,
                  fingerprint BYTEA            NOT NULL,
                  owner_token TEXT             NOT NULL,
                  response    BYTEA,
                  expires_at  TIMESTAMPTZ      NOT NULL,
                  requests       INTEGER,
                  window_ends_at TIMESTAMPTZ
                );
                CREATE INDEX IF NOT EXISTS %2$s ON %1$s (expires_at);
                CREATE INDEX IF NOT EXISTS %3$s ON %1$s (expires_at) WHERE NOT completed;
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

    /** An index of this table (not any relation of that name on the search path), its name folded and cut to 63 bytes as PostgreSQL does with the DDL's. */
    @Override
    public String hasIndexSql() {
        return "SELECT EXISTS (SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
                + " WHERE i.indrelid = to_regclass(?) AND c.relname = left(lower(?), 63))";
    }

    @Override
    public List<String> hasIndexParameters(String index) {
        return List.of(table, index);
    }

    @Override
    public String addCountColumns() {
        return "ALTER TABLE %s ADD COLUMN IF NOT EXISTS requests INTEGER, ADD COLUMN IF NOT EXISTS window_ends_at TIMESTAMPTZ"
                .formatted(table);
    }

    @Override
    public Sql acquire() {
        return new Sql(acquire, KEY, FINGERPRINT, OWNER, LEASE);
    }

    /** A held expired row is skipped ({@code SKIP LOCKED}): the statement returns no row and runs again. */
    @Override
    public boolean acquireReadsHeldRow() {
        return false;
    }

    @Override
    public Sql acquireCounting() {
        return new Sql(acquireCounting, KEY, FINGERPRINT, OWNER, LEASE, PERMITS, WINDOW);
    }

    @Override
    public Sql lastCommitted() {
        return new Sql(lastCommitted, OWNER, FINGERPRINT, KEY);
    }

    /** Lock not available: the {@code NOWAIT} of a row another statement or transaction holds. */
    @Override
    public boolean isHeld(SQLException e) {
        return SqlStates.of(e).equals("55P03");
    }

    @Override
    public Sql complete() {
        return new Sql(complete, RESPONSE, TTL, KEY, OWNER);
    }

    /**
     * Whether a connection is enlisted cannot be asked through JDBC (Liberty's report auto-commit
     * mode even then), so the database is asked: a transaction that already has a transaction id is
     * one (autocommit gives every statement a new transaction, which has none when it begins). One
     * that has not written yet (JPA writes at commit, when the persistence context flushes) is given
     * an id by one statement ({@code txid_current()}) and asked again by the next: inside a
     * transaction the id is still there, in autocommit it is gone with the statement that took it.
     */
    @Override
    public TransactionProbe transactionProbe() {
        return TransactionProbe.ASSIGNED_ID;
    }

    @Override
    public Sql completeInTransaction() {
        return new Sql(completeInTransaction, RESPONSE, TTL, KEY, OWNER);
    }

    @Override
    public String assignTransactionId() {
        return "SELECT txid_current()";
    }

    @Override
    public Sql release() {
        return new Sql(release, KEY, OWNER, KEY);
    }

    @Override
    public Sql expire() {
        return new Sql(expire, KEY, OWNER, KEY);
    }

    /** Every lease in one statement (one round trip). */
    @Override
    public Sql renew() {
        return new Sql(renew);
    }

    @Override
    public Sql deleteExpired() {
        return new Sql(deleteExpired, BATCH);
    }

    @Override
    public boolean limitsInStatement() {
        return false;
    }

    /** Whole milliseconds. */
    @Override
    public long amount(Duration duration) {
        return Math.max(1, duration.toMillis());
    }

    @Override
    public long millis(long amount) {
        return amount;
    }

    /** Serialization failure or deadlock (class 40). */
    @Override
    public boolean isConflict(SQLException e) {
        return SqlStates.of(e).startsWith("40");
    }

    @Override
    public boolean isUnavailable(SQLException e) {
        String state = SqlStates.of(e);
        return state.startsWith("53")      // insufficient resources
                || state.startsWith("57")  // operator intervention: query canceled (timeout), shutting down
                || state.startsWith("40")  // serialization failure, deadlock
                || state.equals("55P03")   // lock not available
                || state.equals("25006");  // read-only transaction: a standby, during a failover
    }

    @Override
    public boolean isMissingTable(SQLException e) {
        return SqlStates.of(e).equals("42P01");
    }

    @Override
    public boolean isMissingColumn(SQLException e) {
        return SqlStates.of(e).equals("42703");
    }

    /** Two creators at once: "IF NOT EXISTS" does not stop one from colliding with the other's uncommitted catalog rows. */
    @Override
    public boolean isCreationCollision(SQLException e) {
        String state = SqlStates.of(e);
        // 23505: the catalog's unique index; 42P07: the table; 42710: its row type ("type ... already exists")
        return state.equals("23505") || state.equals("42P07") || state.equals("42710") || state.startsWith("40");
    }

    @Override
    public String nowSql() {
        return "now()";
    }

    @Override
    public String millisLeftSql() {
        return "FLOOR(EXTRACT(EPOCH FROM (expires_at - now())) * 1000)::BIGINT";
    }

    @Override
    public String expiresMicrosSql() {
        return "(EXTRACT(EPOCH FROM (expires_at - TIMESTAMPTZ 'epoch')) * 1000000)::BIGINT";
    }

    @Override
    public String fromMicrosSql() {
        return "(TIMESTAMPTZ 'epoch' + ?::BIGINT * INTERVAL '1 microsecond')";
    }
}
