package io.idemkey.store.jdbc;

import io.idemkey.spi.AcquireResult;
import io.idemkey.spi.IdempotencyStore;
import io.idemkey.spi.IdempotencyStoreContract;
import io.idemkey.spi.StoreUnavailableException;
import io.idemkey.testing.PostgresServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The store contract on a real PostgreSQL, started privately on a free port, and what is JDBC's own. */
class JdbcIdempotencyStoreTest extends IdempotencyStoreContract {

    private static final String TABLE = "idempotency_keys";
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
    protected IdempotencyStore createStore() {
        return new JdbcIdempotencyStore(postgres.dataSource(), TABLE, 2);
    }

    @Override
    protected Duration shortTtl() {
        return Duration.ofMillis(300);
    }

    @Override
    protected void passTime(Duration duration) {
        sleep(duration.toMillis());
    }

    @Override
    protected int raceIterations() {
        return 20; // 64 threads, each on a new (unpooled) connection: PostgreSQL forks a process per connection
    }

    @Override
    protected void awaitExpiry(long writtenAtNanos, Duration ttl, BooleanSupplier expired) {
        awaitExpiryInRealTime(writtenAtNanos, ttl, expired, 5);
    }

    @Test
    void creatingTheTableTwiceIsHarmless() {
        new JdbcIdempotencyStore(postgres.dataSource(), TABLE, 2).createTable();
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key("after-ddl"), FINGERPRINT, "o", LONG_LOCK));
    }

    @Test
    void anExpiredRowIsTakenOverInTheAcquireStatementNotDeletedFirst() throws SQLException {
        String key = key("takeover");
        store.acquire(key, FINGERPRINT, "crashed-owner", Duration.ofMillis(1));
        sleep(20);
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key, OTHER_FINGERPRINT, "new-owner", LONG_LOCK));
        assertEquals(1, count("record_key = '" + key + "'"), "one row, now the new owner's");
        assertEquals(1, count("record_key = '" + key + "' AND owner_token = 'new-owner'"));
    }

    @Test
    void tableNamesAreIdentifiersOnly() {
        assertThrows(IllegalArgumentException.class, () -> new JdbcIdempotencyStore(postgres.dataSource(),
                "keys; DROP TABLE users", 2));
        assertThrows(IllegalArgumentException.class, () -> JdbcIdempotencyStore.ddl("a b"));
        new JdbcIdempotencyStore(postgres.dataSource(), "public.idempotency_keys", 2);
    }

    @Test
    void whilePostgresIsDownEveryOperationIsUnavailableAndWorksAgainAfterItReturns() {
        String key = key("outage");
        postgres.stop();
        try {
            assertThrows(StoreUnavailableException.class, () -> store.acquire(key, FINGERPRINT, "o", LONG_LOCK));
            assertThrows(StoreUnavailableException.class, () -> store.complete(key, "o", RESPONSE, DAY));
            assertThrows(StoreUnavailableException.class, () -> store.release(key, "o"));
            assertThrows(StoreUnavailableException.class, () -> store.renew(key, "o", LONG_LOCK));
            assertTrue(!store.isAvailable());
        } finally {
            postgres.restart();
        }
        assertTrue(store.isAvailable());
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key, FINGERPRINT, "o", LONG_LOCK));
    }

    private static long count(String where) throws SQLException {
        try (Connection connection = postgres.dataSource().getConnection(); Statement statement = connection.createStatement();
             ResultSet row = statement.executeQuery("SELECT count(*) FROM " + TABLE + " WHERE " + where)) {
            row.next();
            return row.getLong(1);
        }
    }

}
