package io.idemkey.store.jdbc;

import io.idemkey.spi.AcquireResult;
import io.idemkey.spi.Lease;
import io.idemkey.spi.RateLimit;
import io.idemkey.spi.Renewal;
import io.idemkey.spi.TransactionalCompletion;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * What the JDBC store says to one kind of database: its statements, each operation's round trip,
 * and which of its errors mean "unavailable". Picked from the connection ({@link #of}); every
 * operation runs on a connection the store borrowed, with the statement timeout it gives.
 */
interface Dialect {

    /** The databases the store supports, for messages. */
    String SUPPORTED = "PostgreSQL 11 or newer, MariaDB 10.6 or newer";

    /** The database this dialect speaks to, for messages ({@code PostgreSQL 15.19}). */
    String database();

    /** The DDL that creates the table and its indexes if missing (statements separated by {@code ;} and a line end). */
    String ddl();

    /**
     * Whether the table's index of this name exists, read from the catalog (a {@code CREATE INDEX IF
     * NOT EXISTS} of an index that exists still takes a lock that waits for every transaction writing
     * the table, and holds up every write behind it).
     */
    boolean hasIndex(Connection connection, String index, int timeoutSeconds) throws SQLException;

    /** The DDL that adds the rate limit's columns to a table created before they were there. */
    String addCountColumns();

    /**
     * Acquires the key, or reports the record that holds it: one round trip. Null when the
     * statement could not tell (another writer of the key raced it, or a transaction holds an expired
     * row): the caller runs it again.
     */
    AcquireResult acquire(Connection connection, int timeout, String recordKey, byte[] fingerprint, String ownerToken,
                          Duration lockTtl) throws SQLException;

    /**
     * {@link #acquire} that also counts the request against the key's rate limit, in the same round
     * trip (not an acquire of the same owner sent again), and takes over nothing beyond the limit
     * ({@link AcquireResult.RateLimited}). Null (run again) only where it counted nothing: a row
     * another statement or transaction holds (unless {@code lastCommittedIfHeld}: then the row as
     * last committed answers, uncounted, refused if its count already reached the limit).
     */
    AcquireResult acquireCounting(Connection connection, int timeout, String recordKey, byte[] fingerprint,
                                  String ownerToken, Duration lockTtl, RateLimit limit, boolean lastCommittedIfHeld)
            throws SQLException;

    /** The statement's failure says the table does not exist. */
    boolean isMissingTable(SQLException e);

    /** The statement's failure says a column does not exist. */
    boolean isMissingColumn(SQLException e);

    /** Completes the record, outside any transaction: true if it is completed with this owner's response. */
    boolean complete(Connection connection, int timeout, String recordKey, String ownerToken, byte[] response,
                     Duration ttl) throws SQLException;

    /** Completes the record in the transaction the connection is enlisted in, if it is in one that can take it. */
    TransactionalCompletion completeInTransaction(Connection connection, int timeout, String recordKey, String ownerToken,
                                                  byte[] response, Duration ttl) throws SQLException;

    /**
     * Deletes the record if in progress under this owner (where requests are counted: expires it, so
     * that its count lasts to the end of its window); true if the key is free now.
     */
    boolean release(Connection connection, int timeout, String recordKey, String ownerToken, boolean keepCount)
            throws SQLException;

    /** Renews the leases, each compare-and-set on its token, a locked row unknown, never waited for. */
    Renewal[] renew(Connection connection, int timeout, List<Lease> leases) throws SQLException;

    /** Deletes up to {@code batchSize} expired rows, skipping locked ones; how many it deleted. */
    int deleteExpired(Connection connection, int timeout, int batchSize) throws SQLException;

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
