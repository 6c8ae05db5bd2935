package io.idemkey.store.jdbc;

import java.time.Duration;
import java.util.Objects;

/**
 * How to reach the JDBC store: {@code idempotency.jdbc.*}, validated once at deployment.
 *
 * @param dataSource       the name of the application's DataSource: a JNDI name ({@code jdbc/orders}) or a
 *                         {@code @Named} CDI bean's ({@code orders}); null: the {@code @Default} DataSource bean
 * @param table            the table's name, an SQL identifier, optionally schema-qualified
 * @param createTable      whether to create the table and its index at deployment when missing
 * @param timeoutSeconds   the longest one statement may take, lock waits included
 * @param cleanupInterval  how often expired rows are deleted; zero: never (the application does it)
 * @param cleanupBatchSize how many expired rows one cleanup statement deletes
 */
public record JdbcStoreOptions(String dataSource, String table, boolean createTable, int timeoutSeconds,
                               Duration cleanupInterval, int cleanupBatchSize) {

    public JdbcStoreOptions {
        Objects.requireNonNull(table, "table");
        Objects.requireNonNull(cleanupInterval, "cleanupInterval");
    }
}
