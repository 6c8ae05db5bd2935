package io.idemkey.store.jdbc;

import io.idemkey.spi.AcquireResult;
import io.idemkey.spi.TransactionalCompletion;
import io.idemkey.testing.PostgresServer;
import io.idemkey.testing.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.SQLException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The JDBC store on a real PostgreSQL, started privately on a free port. */
class JdbcIdempotencyStoreTest extends JdbcStoreTests {

    private static PostgresServer postgres;

    @BeforeAll
    static void startPostgres() {
        postgres = PostgresServer.start();
        new JdbcIdempotencyStore(postgres.dataSource(), TABLE, 2).createTable();
    }

    @AfterAll
    static void stopPostgres() {
        if (postgres != null) {
            postgres.close();
        }
    }

    @Override
    TestDatabase database() {
        return postgres;
    }

    /** A REPEATABLE READ snapshot would fail on the lease renewals committed since it began: not joined. */
    @Test
    void aRepeatableReadTransactionIsNotJoined() throws SQLException {
        String key = key("repeatable-read");
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key, FINGERPRINT, "owner", LONG_LOCK));
        try (Connection transaction = postgres.dataSource().getConnection()) {
            transaction.setAutoCommit(false);
            transaction.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
            writeEffects(transaction);
            assertEquals(TransactionalCompletion.NOT_JOINED,
                    inTransaction(transaction).completeInTransaction(key, "owner", RESPONSE, DAY));
            transaction.rollback();
        }
        assertInstanceOf(AcquireResult.InProgress.class, store.acquire(key, FINGERPRINT, "retry", LONG_LOCK));
        assertTrue(store.complete(key, "owner", RESPONSE, DAY), "still the owner's to complete");
    }
}
