package io.idemkey.store.jdbc;

import io.idemkey.spi.AcquireResult;
import io.idemkey.spi.Renewal;
import io.idemkey.spi.TransactionalCompletion;
import io.idemkey.testing.MariaDbServer;
import io.idemkey.testing.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The JDBC store on a real MariaDB (InnoDB), started privately on a free port. */
class MariaDbIdempotencyStoreTest extends JdbcStoreTests {

    private static MariaDbServer mariadb;

    @BeforeAll
    static void startMariaDb() {
        mariadb = MariaDbServer.start();
        new JdbcIdempotencyStore(mariadb.dataSource(), TABLE, 2).createTable();
    }

    @AfterAll
    static void stopMariaDb() {
        if (mariadb != null) {
            mariadb.close();
        }
    }

    @Override
    TestDatabase database() {
        return mariadb;
    }

    /**
     * REPEATABLE READ is MariaDB's default, and InnoDB's writes read the latest committed row: a
     * transaction whose snapshot predates a lease renewal still completes the record, in it.
     */
    @Test
    void aRepeatableReadTransactionJoinsAndSeesTheRenewalsCommittedSinceItBegan() throws SQLException {
        String key = key("repeatable-read");
        Duration lease = Duration.ofSeconds(1); // the renewal lands within it on a busy machine
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key, FINGERPRINT, "owner", lease));
        try (Connection transaction = mariadb.dataSource().getConnection()) {
            transaction.setAutoCommit(false);
            assertEquals(Connection.TRANSACTION_REPEATABLE_READ, transaction.getTransactionIsolation());
            try (Statement snapshot = transaction.createStatement()) {
                snapshot.executeQuery("SELECT count(*) FROM " + TABLE).close(); // the snapshot begins
            }
            sleep(lease.toMillis() / 2);
            assertEquals(Renewal.RENEWED, store.renew(key, "owner", LONG_LOCK));
            sleep(lease.toMillis()); // past the lease the snapshot saw
            assertEquals(TransactionalCompletion.JOINED,
                    inTransaction(transaction).completeInTransaction(key, "owner", RESPONSE, DAY));
            transaction.commit();
        }
        assertArrayEquals(RESPONSE, assertInstanceOf(AcquireResult.Completed.class,
                store.acquire(key, FINGERPRINT, "retry", LONG_LOCK)).response());
    }

    @Test
    void mySqlAndOtherDatabasesAreRefusedNamingTheSupportedOnes() {
        UnsupportedDatabaseException refused = assertThrows(UnsupportedDatabaseException.class,
                () -> Dialect.of(metaData("MySQL", "8.4.3", 8, 4), TABLE));
        assertTrueContains(refused.getMessage(), "MySQL 8.4.3 is not supported", "PostgreSQL 11 or newer, MariaDB 10.6 or newer");
        assertTrueContains(assertThrows(UnsupportedDatabaseException.class,
                () -> Dialect.of(metaData("MariaDB", "10.5.2-MariaDB", 10, 5), TABLE)).getMessage(), "too old");
        assertTrueContains(assertThrows(UnsupportedDatabaseException.class,
                () -> Dialect.of(metaData("H2", "2.2.224", 2, 2), TABLE)).getMessage(), "H2 2.2.224 is not supported");
    }

    private static void assertTrueContains(String message, String... parts) {
        for (String part : parts) {
            org.junit.jupiter.api.Assertions.assertTrue(message.contains(part), message);
        }
    }

    /** A connection's metadata, as far as the dialect reads it. */
    private static DatabaseMetaData metaData(String product, String version, int major, int minor) {
        return (DatabaseMetaData) Proxy.newProxyInstance(DatabaseMetaData.class.getClassLoader(),
                new Class<?>[] {DatabaseMetaData.class}, (proxy, method, args) -> switch (method.getName()) {
                    case "getDatabaseProductName" -> product;
                    case "getDatabaseProductVersion" -> version;
                    case "getDatabaseMajorVersion" -> major;
                    case "getDatabaseMinorVersion" -> minor;
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }
}
