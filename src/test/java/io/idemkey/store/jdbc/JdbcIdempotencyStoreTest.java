package io.idemkey.store.jdbc;

import io.idemkey.spi.AcquireResult;
import io.idemkey.spi.TransactionalCompletion;
import io.idemkey.testing.NonValidatingPool;
import io.idemkey.testing.PostgresServer;
import io.idemkey.testing.RoundTripCountingSockets;
import io.idemkey.testing.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.function.LongSupplier;

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

    /**
     * A cleanup batch deletes at most its size whatever plan PostgreSQL picks: with the planner steered
     * to a nested loop that rescans the batch's subquery for every row (as it chose once in a CI run,
     * on the table's statistics of the moment), "IN (SELECT ... LIMIT 3 FOR UPDATE SKIP LOCKED)"
     * deleted 5 rows.
     */
    @Test
    void aCleanupBatchDeletesAtMostItsSizeWhateverThePlan() throws SQLException {
        PGSimpleDataSource steered = (PGSimpleDataSource) postgres.dataSource();
        steered.setOptions("-c enable_hashjoin=off -c enable_mergejoin=off -c enable_hashagg=off -c enable_sort=off"
                + " -c enable_memoize=off -c enable_material=off");
        try (JdbcIdempotencyStore cleaner = new JdbcIdempotencyStore(steered, "steered_keys", 2)) {
            cleaner.createTable();
            assertDeletesExpiredRowsOnlyAtMostABatchAtATime(cleaner);
        }
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

    /**
     * Counted on the wire (a read after a write is a round trip): a first execution is two, its acquire
     * and its completion, and a replay one, as seed 003's INSERT and UPDATE are; nothing else goes to
     * the database on the way (no validation query, no second connection, no session settings).
     */
    @Test
    void aFirstExecutionIsTwoRoundTripsOnTheWireAndAReplayOne() throws SQLException {
        PGSimpleDataSource counted = (PGSimpleDataSource) postgres.dataSource();
        counted.setSocketFactory(RoundTripCountingSockets.class.getName());
        try (NonValidatingPool pool = new NonValidatingPool(counted, 1, Duration.ofSeconds(2));
             JdbcIdempotencyStore wired = new JdbcIdempotencyStore(pool, TABLE, 2)) {
            pool.fill();
            wired.acquire(key("wire-warm-up"), FINGERPRINT, "o", LONG_LOCK); // the dialect, from the connection
            String key = key("wire");
            LongSupplier roundTrips = RoundTripCountingSockets.ROUND_TRIPS::get;
            long before = roundTrips.getAsLong();
            assertInstanceOf(AcquireResult.Acquired.class, wired.acquire(key, FINGERPRINT, "owner", LONG_LOCK));
            assertEquals(1, roundTrips.getAsLong() - before, "acquire");
            before = roundTrips.getAsLong();
            assertTrue(wired.complete(key, "owner", RESPONSE, DAY));
            assertEquals(1, roundTrips.getAsLong() - before, "complete");
            before = roundTrips.getAsLong();
            assertInstanceOf(AcquireResult.Completed.class, wired.acquire(key, FINGERPRINT, "retry", LONG_LOCK));
            assertEquals(1, roundTrips.getAsLong() - before, "replay");
        }
    }

    /** The index of the rows in progress is partial: a completion takes its row out of it (one index entry fewer to write). */
    @Test
    void theIndexOfTheRowsInProgressHoldsOnlyThem() {
        assertEquals(1, postgres.queryLong("SELECT count(*) FROM pg_indexes WHERE indexname = ? AND indexdef LIKE ?",
                TABLE + "_in_progress", "%(expires_at) WHERE (NOT completed)"));
    }
}
