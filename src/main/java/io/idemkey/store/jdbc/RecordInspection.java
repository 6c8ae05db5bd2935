package io.idemkey.store.jdbc;

import io.idemkey.spi.StoreInspection.Page;
import io.idemkey.spi.StoreInspection.Purge;
import io.idemkey.spi.StoreInspection.StoredRecord;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The operators' queries on the table ({@link io.idemkey.spi.StoreInspection}): a record looked up,
 * purged, or listed among those in progress. Each runs on a connection the store borrowed, with the
 * statement timeout it gives, in the dialect's time functions.
 */
final class RecordInspection {

    private final String table;

    RecordInspection(String table) {
        this.table = table;
    }

    /**
     * Where a page of the rows in progress starts: after the row that expires at {@code micros}
     * (microseconds since 1970 UTC) with {@code key}, or at the first ({@link #FIRST}).
     */
    record Cursor(long micros, String key) {

        static final Cursor FIRST = new Cursor(Long.MIN_VALUE, "");

        /** The cursor {@code <expires_at in microseconds>:<record key>}, or the first page for "". */
        static Cursor parse(String cursor) {
            if (cursor.isEmpty()) {
                return FIRST;
            }
            int colon = cursor.indexOf(':');
            try {
                return new Cursor(Long.parseLong(cursor.substring(0, Math.max(0, colon))), cursor.substring(colon + 1));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("not a cursor of the JDBC store: " + cursor);
            }
        }
    }

    /** The live record of this key, if there is one. */
    Optional<StoredRecord> inspect(Connection connection, int timeout, Dialect dialect, String recordKey)
            throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement("SELECT record_key, completed, fingerprint,"
                + " owner_token, response, " + dialect.millisLeftSql() + " FROM " + table
                + " WHERE record_key = ? AND expires_at > " + dialect.nowSql())) {
            statement.setQueryTimeout(timeout);
            statement.setString(1, recordKey);
            try (ResultSet rows = statement.executeQuery()) {
                return rows.next() ? Optional.of(stored(rows)) : Optional.empty();
            }
        }
    }

    /** Deletes the record if it is alive and completed (or forced); where it deleted nothing, says why. */
    Purge purge(Connection connection, int timeout, Dialect dialect, String recordKey, boolean force)
            throws SQLException {
        try (PreparedStatement delete = connection.prepareStatement("DELETE FROM " + table
                + " WHERE record_key = ? AND expires_at > " + dialect.nowSql() + " AND (completed OR ?)")) {
            delete.setQueryTimeout(timeout);
            delete.setString(1, recordKey);
            delete.setBoolean(2, force);
            if (delete.executeUpdate() > 0) {
                return Purge.PURGED;
            }
        }
        try (PreparedStatement look = connection.prepareStatement("SELECT completed FROM " + table
                + " WHERE record_key = ? AND expires_at > " + dialect.nowSql())) {
            look.setQueryTimeout(timeout);
            look.setString(1, recordKey);
            try (ResultSet rows = look.executeQuery()) {
                return rows.next() && !rows.getBoolean(1) ? Purge.IN_PROGRESS : Purge.ABSENT;
            }
        }
    }

    /**
     * The live rows in progress whose key starts with {@code keyPrefix}, in {@code expires_at}, then
     * key, order, after the cursor, at most {@code limit}; the next page's cursor if there are more.
     */
    Page inProgress(Connection connection, int timeout, Dialect dialect, String keyPrefix, Cursor cursor, int limit)
            throws SQLException {
        boolean first = cursor.micros() == Long.MIN_VALUE;
        String after = first ? "" : " AND (expires_at > " + dialect.fromMicrosSql()
                + " OR (expires_at = " + dialect.fromMicrosSql() + " AND record_key > ?))";
        try (PreparedStatement statement = connection.prepareStatement("SELECT record_key, completed, fingerprint,"
                + " owner_token, response, " + dialect.millisLeftSql() + ", " + dialect.expiresMicrosSql()
                + " FROM " + table + " WHERE completed = FALSE AND expires_at > " + dialect.nowSql()
                + " AND record_key LIKE ? ESCAPE '!'" + after + " ORDER BY expires_at, record_key")) {
            statement.setQueryTimeout(timeout);
            statement.setMaxRows(limit + 1);
            statement.setString(1, likePrefix(keyPrefix));
            if (!first) {
                statement.setLong(2, cursor.micros());
                statement.setLong(3, cursor.micros());
                statement.setString(4, cursor.key());
            }
            List<StoredRecord> found = new ArrayList<>();
            String next = "";
            long lastMicros = 0;
            try (ResultSet rows = statement.executeQuery()) {
                while (rows.next()) {
                    if (found.size() == limit) {
                        StoredRecord last = found.get(found.size() - 1);
                        next = lastMicros + ":" + last.recordKey();
                        break;
                    }
                    found.add(stored(rows));
                    lastMicros = rows.getLong(7);
                }
            }
            return new Page(found, next);
        }
    }

    private static StoredRecord stored(ResultSet rows) throws SQLException {
        boolean completed = rows.getBoolean(2);
        byte[] response = completed ? rows.getBytes(5) : null;
        return new StoredRecord(rows.getString(1), completed, rows.getBytes(3), rows.getString(4),
                Duration.ofMillis(Math.max(0, rows.getLong(6))), response == null ? new byte[0] : response);
    }

    /** A LIKE pattern (escape character {@code !}) for the keys that start with {@code prefix}. */
    static String likePrefix(String prefix) {
        return prefix.replace("!", "!!").replace("%", "!%").replace("_", "!_") + "%";
    }
}
