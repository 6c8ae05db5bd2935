package io.idemkey.store.jdbc;

import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * What the JDBC store says to one kind of database: its statements and the parameters each takes,
 * how it measures time, and how it names its errors. Picked from the connection ({@link #of}); the
 * store runs the statements ({@link RecordStatements}), so a dialect holds SQL and vocabulary only.
 */
interface Dialect {

    /** The databases the store supports, for messages. */
    String SUPPORTED = "PostgreSQL 11 or newer, MariaDB 10.6 or newer";

    /** A value a statement takes, bound from the operation's arguments. */
    enum Param {
        /** The record key (text). */
        KEY,
        /** The request's fingerprint (bytes). */
        FINGERPRINT,
        /** The owner token (text). */
        OWNER,
        /** The lease, in the dialect's {@link #amount} of time. */
        LEASE,
        /** The rate limit's permits (an integer). */
        PERMITS,
        /** The rate limit's window, in the dialect's {@link #amount} of time. */
        WINDOW,
        /** The response to record (bytes). */
        RESPONSE,
        /** The completed record's time to live, in the dialect's {@link #amount} of time. */
        TTL,
        /** How many rows a cleanup deletes at most (an integer). */
        BATCH
    }

    /** A statement's text and the values it takes, in the order of its parameters. */
    record Sql(String text, Param... params) {
    }

    /**
     * How the database tells that the completing statement runs in the caller's transaction.
     * {@link #ASSIGNED_ID}: the statement returns whether the transaction has an id, whether it reads
     * committed data, and whether it completed the record; one that has no id yet is given one
     * ({@link #assignTransactionId}) and the statement runs once more. {@link #IN_TRANSACTION_FLAG}:
     * the statement completes only inside a transaction; where it changed nothing,
     * {@link #completedByOwner} says whether it ran in one and whether the record is ours, completed.
     */
    enum TransactionProbe { ASSIGNED_ID, IN_TRANSACTION_FLAG }

    /** The database this dialect speaks to, for messages ({@code PostgreSQL 15.19}). */
    String database();

    /** The DDL that creates the table and its indexes if missing (statements separated by {@code ;} and a line end). */
    String ddl();

    /**
     * The catalog query that returns a row whose first column is true if the table's index named by
     * its parameters exists (a {@code CREATE INDEX IF NOT EXISTS} of an index that exists still takes
     * a lock that waits for every transaction writing the table, and holds up every write behind it).
     */
    String hasIndexSql();

    /** The parameters of {@link #hasIndexSql} for the index of this name. */
    List<String> hasIndexParameters(String index);

    /** The DDL that adds the rate limit's columns to a table created before they were there. */
    String addCountColumns();

    /**
     * Acquires the key, or returns the record that holds it: column 1 taken, 2 completed, 3 fingerprint,
     * 4 response (if the same fingerprint), 5 the {@link #millis time} left. No row when the statement
     * could not tell (another writer of the key raced it, or a transaction holds an expired row).
     */
    Sql acquire();

    /** Whether a row {@link #acquire} finds held ({@link #isHeld}) is answered as {@link #lastCommitted}. */
    boolean acquireReadsHeldRow();

    /**
     * {@link #acquire} that also counts the request against the key's rate limit (not an acquire of
     * the same owner sent again) and takes over nothing beyond it: its columns as acquire's, then 6
     * over the limit and 7 the time left in the window. Fails ({@link #isHeld}) on a row another
     * statement or transaction holds.
     */
    Sql acquireCounting();

    /**
     * The row as last committed, without a lock: column 1 takeable (expired, or this owner's), 2 to 5
     * as {@link #acquire}'s, 6 the count and 7 the time left in its window (0 without a window).
     */
    Sql lastCommitted();

    /** A statement's failure says another statement or transaction holds the row it needs now. */
    boolean isHeld(SQLException e);

    /** The statement's failure says the table does not exist. */
    boolean isMissingTable(SQLException e);

    /** The statement's failure says a column does not exist. */
    boolean isMissingColumn(SQLException e);

    /** Completes the record, outside any transaction: one row changed if it is completed with this owner's response. */
    Sql complete();

    /** How {@link #completeInTransaction} tells that it runs in the caller's transaction. */
    TransactionProbe transactionProbe();

    /** Completes the record in the transaction the connection is enlisted in, if it is in one that can take it. */
    Sql completeInTransaction();

    /** The statement that gives the current transaction an id ({@link TransactionProbe#ASSIGNED_ID}). */
    default String assignTransactionId() {
        return null;
    }

    /**
     * Where a completion may change nothing and still have completed (sent again, or a driver that
     * counts changed rows): whether the connection is in a transaction, and whether the record is
     * completed by this owner; null where the completion's count answers alone.
     */
    default Sql completedByOwner() {
        return null;
    }

    /**
     * Deletes the record if in progress under this owner; where {@link #free} is null, a query whose
     * first column says whether the key is free now, else an update (one row: released).
     */
    Sql release();

    /** {@link #release} where requests are counted: expires the row, so that its count lasts to the end of its window. */
    Sql expire();

    /** Whether the key is free now, after a release that changed nothing; null where the release answers itself. */
    default Sql free() {
        return null;
    }

    /**
     * Renews leases, compare-and-set on the token, a locked row never waited for. Where
     * {@link #heldLease} is null, every lease in one query on arrays of the keys, tokens and
     * {@link #amount amounts}, returning a row per lease in their order whose column 2 is 1 renewed,
     * 0 unknown, -1 lost; else an update of one lease (its row failing at once if held).
     */
    Sql renew();

    /** The name of the database's text type, for the arrays of a batch renew. */
    default String textType() {
        return "text";
    }

    /** The name of the database's 64-bit integer type, for the arrays of a batch renew. */
    default String bigintType() {
        return "bigint";
    }

    /** A lease whose row a transaction holds: true if it was ours and alive as last committed; null for a batch renew. */
    default Sql heldLease() {
        return null;
    }

    /** Deletes up to {@link Param#BATCH} expired rows, skipping locked ones. */
    Sql deleteExpired();

    /**
     * Whether the statement carries its own time limit (a {@code %1$d} in its text for the seconds),
     * instead of the driver's statement timeout.
     */
    boolean limitsInStatement();

    /** A duration as the statements take it (a whole amount of the database's unit, at least one millisecond). */
    long amount(Duration duration);

    /** An amount of time the statements return, in whole milliseconds (rounded up). */
    long millis(long amount);

    /** SQL for the database's current time, comparable with {@code expires_at}. */
    String nowSql();

    /** SQL for the whole milliseconds from now until {@code expires_at} (a BIGINT). */
    String millisLeftSql();

    /** SQL for {@code expires_at} as whole microseconds since 1970 UTC (a BIGINT). */
    String expiresMicrosSql();

    /** SQL for a parameter of microseconds since 1970 UTC as a value comparable with {@code expires_at}. */
    String fromMicrosSql();

    /** A concurrency conflict (deadlock, serialization failure): the statement may run again at once. */
    boolean isConflict(SQLException e);

    /** An error that means the database is unavailable or busy now, not a defect (beyond broken connections). */
    boolean isUnavailable(SQLException e);

    /** A collision with another's table creation (the table is there once it committed). */
    boolean isCreationCollision(SQLException e);

    /**
     * The dialect of the database the connection is to.
     *
     * @throws UnsupportedDatabaseException naming the database and the supported ones
     */
    static Dialect of(DatabaseMetaData database, String table) throws SQLException {
        String product = database.getDatabaseProductName();
        String version = database.getDatabaseProductVersion();
        int major = database.getDatabaseMajorVersion();
        int minor = database.getDatabaseMinorVersion();
        String name = product + " " + version;
        String lower = (product + " " + version).toLowerCase(Locale.ROOT);
        if (lower.contains("mariadb")) {
            if (major < 10 || (major == 10 && minor < 6)) {
                throw new UnsupportedDatabaseException(name + " is too old for the JDBC store (it needs SKIP LOCKED"
                        + " and INSERT ... RETURNING); supported: " + SUPPORTED);
            }
            return new MariaDbDialect(table, name);
        }
        if (product.equalsIgnoreCase("PostgreSQL")) {
            if (major < 11) {
                throw new UnsupportedDatabaseException(name + " is too old for the JDBC store; supported: " + SUPPORTED);
            }
            return new PostgresDialect(table, name);
        }
        if (lower.contains("mysql")) {
            throw new UnsupportedDatabaseException(name + " is not supported by the JDBC store: MySQL has neither"
                    + " INSERT ... RETURNING nor @@in_transaction, which its one-round-trip acquire and its exactly-once"
                    + " completion need (see docs/jdbc.md, MySQL is not supported); supported: " + SUPPORTED);
        }
        throw new UnsupportedDatabaseException(name + " is not supported by the JDBC store; supported: " + SUPPORTED);
    }

}
