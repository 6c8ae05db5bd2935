package io.idemkey.testing;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/** A private database server a test started (PostgreSQL or MariaDB), which it can stop, restart and freeze. */
public interface TestDatabase extends AutoCloseable {

    /** {@code PostgreSQL} or {@code MariaDB}. */
    String name();

    String address();

    int port();

    /** A plain (unpooled) data source, with timeouts that keep a test from hanging. */
    DataSource dataSource();

    /** A plain data source without a read timeout, as a container's pool gets it from its users' configuration. */
    DataSource dataSourceWithoutReadTimeout();

    /** Runs statements (no parameters, no results): DDL, test data. */
    void execute(String sql);

    /** The first column of the first row of a query (a count), with these parameters. */
    default long queryLong(String sql, Object... parameters) {
        try (Connection connection = dataSource().getConnection(); PreparedStatement query = connection.prepareStatement(sql)) {
            for (int i = 0; i < parameters.length; i++) {
                query.setObject(i + 1, parameters[i]);
            }
            try (ResultSet row = query.executeQuery()) {
                if (!row.next()) {
                    throw new IllegalStateException("no row: " + sql);
                }
                return row.getLong(1);
            }
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    /** Runs a statement that changes rows, with these parameters: how many it changed. */
    default int update(String sql, Object... parameters) {
        try (Connection connection = dataSource().getConnection(); PreparedStatement statement = connection.prepareStatement(sql)) {
            for (int i = 0; i < parameters.length; i++) {
                statement.setObject(i + 1, parameters[i]);
            }
            return statement.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    /** Stops the server at once (an outage: connections drop); its data stays. */
    void stop();

    /** Starts the stopped server again on the same port, with its data. */
    void restart();

    /** Freezes every process of the server (SIGSTOP): connections stay open, nothing answers. */
    void freeze();

    void thaw();

    @Override
    void close();
}
