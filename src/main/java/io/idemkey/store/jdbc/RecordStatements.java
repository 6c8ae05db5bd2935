package io.idemkey.store.jdbc;

import io.idemkey.spi.AcquireResult;
import io.idemkey.spi.Lease;
import io.idemkey.spi.RateLimit;
import io.idemkey.spi.Renewal;
import io.idemkey.spi.TransactionalCompletion;
import io.idemkey.store.jdbc.Dialect.Param;
import io.idemkey.store.jdbc.Dialect.Sql;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

/**
 * Runs a dialect's statements for the record operations and reads their rows: each operation's
 * round trips, on a connection the store borrowed, with the statement timeout it gives. What the
 * statements say is the dialect's; in which order they run and what their answers mean is here.
 */
final class RecordStatements {

    private final Dialect dialect;
    private final String table;

    RecordStatements(Dialect dialect, String table) {
        this.dialect = dialect;
        this.table = table;
    }

    /** The values of one operation, bound to a statement's parameters as its {@link Sql#params} name them. */
    private record Values(String key, byte[] fingerprint, String owner, Duration lease, RateLimit limit,
                          byte[] response, Duration ttl, int batch) {

        static Values record(String key, String owner) {
            return new Values(key, null, owner, null, null, null, null, 0);
        }
    }

    /**
     * Acquires the key, or reports the record that holds it: one round trip (two where the dialect
     * reads a held row as last committed). Null when the statement could not tell (another writer
     * of the key raced it, or a transaction holds an expired row): the caller runs it again.
     */
    AcquireResult acquire(Connection connection, int timeout, String recordKey, byte[] fingerprint, String ownerToken,
                          Duration lockTtl) throws SQLException {
        Values values = new Values(recordKey, fingerprint, ownerToken, lockTtl, null, null, null, 0);
        try (PreparedStatement statement = prepare(connection, timeout, dialect.acquire(), values);
             ResultSet row = statement.executeQuery()) {
            if (!row.next()) {
                return null;
            }
            return row.getBoolean(1) ? AcquireResult.ACQUIRED : existing(row, fingerprint);
        } catch (SQLException e) {
            if (!dialect.acquireReadsHeldRow() || !dialect.isHeld(e)) {
                throw e;
            }
        }
        return lastCommitted(connection, timeout, values);
    }

    /**
     * {@link #acquire} that also counts the request against the key's rate limit, in the same round
     * trip (not an acquire of the same owner sent again), and takes over nothing beyond the limit
     * ({@link AcquireResult.RateLimited}). Null (run again) only where it counted nothing: a row
     * another statement or transaction holds (unless {@code lastCommittedIfHeld}: then the row as
     * last committed answers, uncounted, refused if its count already reached the limit).
     */
    AcquireResult acquireCounting(Connection connection, int timeout, String recordKey, byte[] fingerprint,
                                  String ownerToken, Duration lockTtl, RateLimit limit, boolean lastCommittedIfHeld)
            throws SQLException {
        Values values = new Values(recordKey, fingerprint, ownerToken, lockTtl, limit, null, null, 0);
        try (PreparedStatement statement = prepare(connection, timeout, dialect.acquireCounting(), values);
             ResultSet row = statement.executeQuery()) {
            row.next();
            if (row.getBoolean(1)) {
                return AcquireResult.ACQUIRED;
            }
            if (row.getBoolean(6)) {
                return rateLimited(row.getLong(7));
            }
            return existing(row, fingerprint);
        } catch (SQLException e) {
            if (!dialect.isHeld(e)) {
                throw e;
            }
        }
        if (!lastCommittedIfHeld) {
            return null; // another request's statement holds the row for a moment: counted when run again
        }
        return lastCommitted(connection, timeout, values);
    }

    /**
     * A row a transaction holds (its owner's transaction committing, or a storm of requests): what it
     * was last committed as, read without waiting, uncounted; with a rate limit, refused if its count
     * already reached it. Null (run again) if there is no row yet or it is takeable.
     */
    private AcquireResult lastCommitted(Connection connection, int timeout, Values values) throws SQLException {
        try (PreparedStatement statement = prepare(connection, timeout, dialect.lastCommitted(), values);
             ResultSet row = statement.executeQuery()) {
            boolean found = row.next();
            if (found && values.limit() != null && row.getLong(7) > 0 && row.getInt(6) >= values.limit().permits()) {
                return rateLimited(row.getLong(7));
            }
            if (!found || row.getBoolean(1)) {
                return null; // being inserted, or expired and held (a cleanup's DELETE, its owner committing): again
            }
            return existing(row, values.fingerprint());
        }
    }

    private AcquireResult rateLimited(long windowLeft) {
        return new AcquireResult.RateLimited(Duration.ofMillis(Math.max(1, dialect.millis(windowLeft))));
    }

    /** A record this acquire did not take: columns 2-5 are completed, fingerprint, response (if the same request), time left. */
    private AcquireResult existing(ResultSet row, byte[] fingerprint) throws SQLException {
        if (!Arrays.equals(row.getBytes(3), fingerprint)) {
            return AcquireResult.MISMATCH;
        }
        Duration left = Duration.ofMillis(Math.max(0, dialect.millis(row.getLong(5))));
        return row.getBoolean(2) ? new AcquireResult.Completed(row.getBytes(4), left) : new AcquireResult.InProgress(left);
    }

    /** Completes the record, outside any transaction: true if it is completed with this owner's response. */
    boolean complete(Connection connection, int timeout, String recordKey, String ownerToken, byte[] response,
                     Duration ttl) throws SQLException {
        return completing(connection, timeout, dialect.complete(), recordKey, ownerToken, response, ttl)
                || (dialect.completedByOwner() != null && completedByOwner(connection, timeout, recordKey, ownerToken)[1]);
    }

    /** Completes the record in the transaction the connection is enlisted in, if it is in one that can take it. */
    TransactionalCompletion completeInTransaction(Connection connection, int timeout, String recordKey,
                                                  String ownerToken, byte[] response, Duration ttl) throws SQLException {
        return switch (dialect.transactionProbe()) {
            case ASSIGNED_ID -> completeWithTransactionId(connection, timeout, recordKey, ownerToken, response, ttl);
            case IN_TRANSACTION_FLAG -> completeInFlaggedTransaction(connection, timeout, recordKey, ownerToken, response, ttl);
        };
    }

    /** {@link Dialect.TransactionProbe#ASSIGNED_ID}: a read-committed transaction without an id yet is given one, then asked again. */
    private TransactionalCompletion completeWithTransactionId(Connection connection, int timeout, String recordKey,
                                                              String ownerToken, byte[] response, Duration ttl)
            throws SQLException {
        InTransaction first = completeInTransactionOnce(connection, timeout, recordKey, ownerToken, response, ttl);
        if (first.outcome() != null || !first.readCommitted()) {
            return first.outcomeOrNotJoined();
        }
        try (Statement statement = connection.createStatement()) {
            statement.setQueryTimeout(timeout);
            statement.execute(dialect.assignTransactionId());
        }
        return completeInTransactionOnce(connection, timeout, recordKey, ownerToken, response, ttl).outcomeOrNotJoined();
    }

    /** What one completing statement in the caller's transaction found: {@code outcome} null if it could not join. */
    private record InTransaction(TransactionalCompletion outcome, boolean readCommitted) {
        TransactionalCompletion outcomeOrNotJoined() {
            return outcome == null ? TransactionalCompletion.NOT_JOINED : outcome;
        }
    }

    private InTransaction completeInTransactionOnce(Connection connection, int timeout, String recordKey,
                                                    String ownerToken, byte[] response, Duration ttl) throws SQLException {
        try (PreparedStatement statement = prepare(connection, timeout, dialect.completeInTransaction(),
                completion(recordKey, ownerToken, response, ttl));
             ResultSet row = statement.executeQuery()) {
            row.next();
            boolean hasId = row.getBoolean(1);
            boolean readCommitted = row.getBoolean(2);
            if (!hasId || !readCommitted) {
                return new InTransaction(null, readCommitted);
            }
            return new InTransaction(row.getBoolean(3) ? TransactionalCompletion.JOINED : TransactionalCompletion.LOST, true);
        }
    }

    /** {@link Dialect.TransactionProbe#IN_TRANSACTION_FLAG}: where the completion changed nothing, asked why. */
    private TransactionalCompletion completeInFlaggedTransaction(Connection connection, int timeout, String recordKey,
                                                                 String ownerToken, byte[] response, Duration ttl)
            throws SQLException {
        if (completing(connection, timeout, dialect.completeInTransaction(), recordKey, ownerToken, response, ttl)) {
            return TransactionalCompletion.JOINED;
        }
        boolean[] found = completedByOwner(connection, timeout, recordKey, ownerToken);
        if (!found[0]) {
            return TransactionalCompletion.NOT_JOINED;
        }
        return found[1] ? TransactionalCompletion.JOINED : TransactionalCompletion.LOST;
    }

    private boolean completing(Connection connection, int timeout, Sql sql, String recordKey, String ownerToken,
                               byte[] response, Duration ttl) throws SQLException {
        try (PreparedStatement statement = prepare(connection, timeout, sql, completion(recordKey, ownerToken, response, ttl))) {
            return statement.executeUpdate() == 1;
        }
    }

    private static Values completion(String recordKey, String ownerToken, byte[] response, Duration ttl) {
        return new Values(recordKey, null, ownerToken, null, null, response, ttl, 0);
    }

    /** Whether the connection is in a transaction, and whether the record is completed by this owner. */
    private boolean[] completedByOwner(Connection connection, int timeout, String recordKey, String ownerToken)
            throws SQLException {
        try (PreparedStatement statement = prepare(connection, timeout, dialect.completedByOwner(),
                Values.record(recordKey, ownerToken));
             ResultSet row = statement.executeQuery()) {
            row.next();
            return new boolean[] {row.getInt(1) == 1, row.getBoolean(2)};
        }
    }

    /**
     * Deletes the record if in progress under this owner (where requests are counted: expires it, so
     * that its count lasts to the end of its window); true if the key is free now.
     */
    boolean release(Connection connection, int timeout, String recordKey, String ownerToken, boolean keepCount)
            throws SQLException {
        Values values = Values.record(recordKey, ownerToken);
        Sql release = keepCount ? dialect.expire() : dialect.release();
        Sql free = dialect.free();
        try (PreparedStatement statement = prepare(connection, timeout, release, values)) {
            if (free == null) {
                try (ResultSet row = statement.executeQuery()) {
                    return row.next() && row.getBoolean(1);
                }
            }
            if (statement.executeUpdate() == 1) {
                return true;
            }
        }
        try (PreparedStatement statement = prepare(connection, timeout, free, values);
             ResultSet row = statement.executeQuery()) {
            return row.next() && row.getBoolean(1);
        }
    }

    /** Renews the leases, each compare-and-set on its token, a locked row unknown, never waited for. */
    Renewal[] renew(Connection connection, int timeout, List<Lease> leases) throws SQLException {
        return dialect.heldLease() == null ? renewInOne(connection, timeout, leases) : renewEach(connection, timeout, leases);
    }

    /** Every lease in one statement (one round trip), on arrays of their keys, tokens and leases. */
    private Renewal[] renewInOne(Connection connection, int timeout, List<Lease> leases) throws SQLException {
        Renewal[] renewals = new Renewal[leases.size()];
        try (PreparedStatement statement = prepare(connection, timeout, dialect.renew(), null)) {
            statement.setArray(1, connection.createArrayOf(dialect.textType(), leases.stream().map(Lease::recordKey).toArray()));
            statement.setArray(2, connection.createArrayOf(dialect.textType(), leases.stream().map(Lease::ownerToken).toArray()));
            statement.setArray(3, connection.createArrayOf(dialect.bigintType(),
                    leases.stream().map(lease -> dialect.amount(lease.lockTtl())).toArray()));
            try (ResultSet rows = statement.executeQuery()) {
                for (int i = 0; i < renewals.length; i++) {
                    rows.next();
                    int outcome = rows.getInt(2);
                    renewals[i] = outcome > 0 ? Renewal.RENEWED : outcome == 0 ? Renewal.UNKNOWN : Renewal.LOST;
                }
            }
        }
        return renewals;
    }

    /** One statement per lease; a row a transaction holds is answered unknown at once if it is ours and alive. */
    private Renewal[] renewEach(Connection connection, int timeout, List<Lease> leases) throws SQLException {
        Renewal[] renewals = new Renewal[leases.size()];
        Sql renew = dialect.renew();
        try (PreparedStatement statement = prepare(connection, timeout, renew, null)) {
            for (int i = 0; i < renewals.length; i++) {
                Lease lease = leases.get(i);
                Values values = lease(lease);
                bind(statement, renew, values);
                try {
                    renewals[i] = statement.executeUpdate() == 1 ? Renewal.RENEWED : Renewal.LOST;
                } catch (SQLException e) {
                    if (!dialect.isHeld(e)) {
                        throw e;
                    }
                    renewals[i] = held(connection, timeout, values);
                }
            }
        }
        return renewals;
    }

    private static Values lease(Lease lease) {
        return new Values(lease.recordKey(), null, lease.ownerToken(), lease.lockTtl(), null, null, null, 0);
    }

    /** A lease whose row a transaction holds: unknown if it was ours and alive as last committed, else lost. */
    private Renewal held(Connection connection, int timeout, Values lease) throws SQLException {
        try (PreparedStatement statement = prepare(connection, timeout, dialect.heldLease(), lease);
             ResultSet row = statement.executeQuery()) {
            return row.next() && row.getBoolean(1) ? Renewal.UNKNOWN : Renewal.LOST;
        }
    }

    /**
     * Replaces the response of the record completed by this owner, if it is still alive (or, on the
     * connection of the transaction that completed it, whatever its expiry): true if it did.
     */
    boolean replaceResponse(Connection connection, int timeout, String recordKey, String ownerToken, byte[] response,
                            boolean alive) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement("UPDATE " + table + " SET response = ?"
                + " WHERE record_key = ? AND owner_token = ? AND completed"
                + (alive ? " AND expires_at > " + dialect.nowSql() : ""))) {
            statement.setQueryTimeout(timeout);
            statement.setBytes(1, response);
            statement.setString(2, recordKey);
            statement.setString(3, ownerToken);
            return statement.executeUpdate() == 1;
        }
    }

    /** Deletes up to {@code batchSize} expired rows, skipping locked ones; how many it deleted. */
    int deleteExpired(Connection connection, int timeout, int batchSize) throws SQLException {
        try (PreparedStatement statement = prepare(connection, timeout, dialect.deleteExpired(),
                new Values(null, null, null, null, null, null, null, batchSize))) {
            return statement.executeUpdate();
        }
    }

    /**
     * The statement prepared with the time limit (in its text or as the driver's statement timeout,
     * as the dialect takes it), its parameters bound if {@code values} are given.
     */
    private PreparedStatement prepare(Connection connection, int timeout, Sql sql, Values values) throws SQLException {
        PreparedStatement statement;
        if (dialect.limitsInStatement()) {
            statement = connection.prepareStatement(sql.text().formatted(timeout));
        } else {
            statement = connection.prepareStatement(sql.text());
            statement.setQueryTimeout(timeout);
        }
        if (values != null) {
            try {
                bind(statement, sql, values);
            } catch (SQLException | RuntimeException e) {
                statement.close();
                throw e;
            }
        }
        return statement;
    }

    private void bind(PreparedStatement statement, Sql sql, Values values) throws SQLException {
        Param[] params = sql.params();
        for (int i = 0; i < params.length; i++) {
            int index = i + 1;
            switch (params[i]) {
                case KEY -> statement.setString(index, values.key());
                case FINGERPRINT -> statement.setBytes(index, values.fingerprint());
                case OWNER -> statement.setString(index, values.owner());
                case LEASE -> statement.setLong(index, dialect.amount(values.lease()));
                case PERMITS -> statement.setInt(index, values.limit().permits());
                case WINDOW -> statement.setLong(index, dialect.amount(values.limit().window()));
                case RESPONSE -> statement.setBytes(index, values.response());
                case TTL -> statement.setLong(index, dialect.amount(values.ttl()));
                case BATCH -> statement.setInt(index, values.batch());
            }
        }
    }
}
