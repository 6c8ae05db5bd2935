package io.idemkey.store.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Creates the store's table and its indexes where they are missing, or says what a table the
 * application manages lacks: on a connection the store borrowed, in the dialect's DDL.
 */
final class TableSetup {

    /**
     * A statement of the DDL that creates an index (its name in group 1): run only if the catalog lacks
     * the index, since {@code IF NOT EXISTS} alone would still lock the table at every deployment.
     */
    private static final Pattern CREATE_INDEX = Pattern.compile("^\\s*CREATE INDEX IF NOT EXISTS (\\w+) ON ");

    private final String table;

    TableSetup(String table) {
        this.table = table;
    }

    /** Runs the dialect's DDL, but for the indexes that exist, and adds the rate limit's columns to a table made before them. */
    void create(Connection connection, int timeout, Dialect dialect) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.setQueryTimeout(timeout);
            for (String ddl : dialect.ddl().split(";\\s*\\n")) {
                Matcher index = CREATE_INDEX.matcher(ddl);
                if (!ddl.isBlank() && !(index.find() && hasIndex(connection, timeout, dialect, index.group(1)))) {
                    statement.execute(ddl);
                }
            }
            if ("columns".equals(lacks(connection, dialect))) {
                statement.execute(dialect.addCountColumns());
            }
        }
    }

    /** What the table lacks, naming the statement that adds it; empty if it has everything. */
    Optional<String> missing(Connection connection, Dialect dialect) throws SQLException {
        String lacks = lacks(connection, dialect);
        if ("table".equals(lacks)) {
            return Optional.of("the table " + table + " does not exist: create it with " + dialect.ddl());
        }
        if ("columns".equals(lacks)) {
            return Optional.of("the table " + table + " lacks the rate limit's columns (requests,"
                    + " window_ends_at) this version writes: add them with " + dialect.addCountColumns());
        }
        return Optional.empty();
    }

    /** Whether the table's index of this name exists, read from the catalog. */
    private static boolean hasIndex(Connection connection, int timeout, Dialect dialect, String index)
            throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(dialect.hasIndexSql())) {
            statement.setQueryTimeout(timeout);
            List<String> parameters = dialect.hasIndexParameters(index);
            for (int i = 0; i < parameters.size(); i++) {
                statement.setString(i + 1, parameters.get(i));
            }
            try (ResultSet row = statement.executeQuery()) {
                return row.next() && row.getBoolean(1);
            }
        }
    }

    /**
     * What the table lacks, asked of the table itself (resolved as every statement resolves it):
     * {@code "table"}, {@code "columns"} (the rate limit's), or null if it has everything.
     */
    private String lacks(Connection connection, Dialect dialect) throws SQLException {
        try (Statement probe = connection.createStatement()) {
            probe.execute("SELECT record_key, requests, window_ends_at FROM " + table + " WHERE 1 = 0");
            return null;
        } catch (SQLException e) {
            if (dialect.isMissingTable(e)) {
                return "table";
            }
            if (dialect.isMissingColumn(e)) {
                return "columns";
            }
            throw e;
        }
    }
}
