package io.idemkey.store.jdbc;

import io.idemkey.spi.AcquireResult;
import io.idemkey.spi.StoreUnavailableException;
import io.idemkey.testing.NonValidatingPool;
import io.idemkey.testing.TestDatabase;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.time.Duration;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The JDBC store's calls are bounded by its timeout whatever the pool and the network do: a pool
 * that business transactions drained, a database that vanished without a reset, connections a
 * database restart killed and a pool that never checks them. On a real PostgreSQL, through a pool
 * that behaves as a container's does by default ({@link NonValidatingPool}). On PostgreSQL
 * ({@link StoreConnectionsTest}) and MariaDB ({@link MariaDbStoreConnectionsTest}).
 */
abstract class StoreConnectionsTests {

    private static final byte[] FINGERPRINT = {1, 2, 3};
    private static final Duration LOCK = Duration.ofMinutes(1);
    private static final int TIMEOUT_SECONDS = 1;
    /** The database of the subclass, started once for the class, with the table created. */
    abstract TestDatabase database();

    /** A pool whose every connection business transactions hold: unavailable after the store's timeout, not the pool's 60 s. */
    @Test
    void aPoolDrainedByBusinessTransactionsMakesTheCallUnavailableWithinTheStoresTimeout() throws Exception {
        try (NonValidatingPool pool = new NonValidatingPool(database().dataSourceWithoutReadTimeout(), 2, Duration.ofSeconds(60));
             JdbcIdempotencyStore store = new JdbcIdempotencyStore(pool, "idempotency_keys", TIMEOUT_SECONDS)) {
            try (Connection business1 = pool.getConnection(); Connection business2 = pool.getConnection()) {
                long started = System.nanoTime();
                StoreUnavailableException unavailable = assertTimeoutPreemptively(Duration.ofSeconds(20), () ->
                        assertThrows(StoreUnavailableException.class, () -> store.acquire(key(), FINGERPRINT, "o", LOCK)));
                long millis = (System.nanoTime() - started) / 1_000_000;
                assertTrue(millis < 3_000, "unavailable after " + millis + " ms: " + unavailable.getMessage());
                assertInstanceOf(NoConnectionException.class, unavailable);
                assertFalse(Thread.currentThread().isInterrupted(), "the watchdog's interrupt is not left behind");
            }
            assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key(), FINGERPRINT, "o", LOCK), "free again");
        }
    }

    /** An interrupt the caller had before the call is the caller's: kept. */
    @Test
    void anInterruptTheCallerHadIsKept() {
        try (NonValidatingPool pool = new NonValidatingPool(database().dataSourceWithoutReadTimeout(), 2, Duration.ofSeconds(60));
             JdbcIdempotencyStore store = new JdbcIdempotencyStore(pool, "idempotency_keys", TIMEOUT_SECONDS)) {
            Thread.currentThread().interrupt();
            try {
                store.isAvailable();
                assertTrue(Thread.currentThread().isInterrupted());
            } finally {
                Thread.interrupted();
            }
        }
    }

    /**
     * A database that stops answering on an open connection (its host gone without a reset): the
     * statement timeout is the database's to carry out, so only the connection's network timeout
     * ends the read. Unavailable within about the store's timeout, not never.
     */
    @Test
    void aCallOnAConnectionWhoseDatabaseVanishedIsUnavailableWithinAboutTheTimeout() throws Exception {
        try (NonValidatingPool pool = new NonValidatingPool(database().dataSourceWithoutReadTimeout(), 1, Duration.ofSeconds(60));
             JdbcIdempotencyStore store = new JdbcIdempotencyStore(pool, "idempotency_keys", TIMEOUT_SECONDS)) {
            pool.fill(); // one open connection, idle in the pool
            database().freeze();
            try {
                long started = System.nanoTime();
                assertTimeoutPreemptively(Duration.ofSeconds(20), () ->
                        assertThrows(StoreUnavailableException.class, () -> store.acquire(key(), FINGERPRINT, "o", LOCK)));
                long millis = (System.nanoTime() - started) / 1_000_000;
                assertTrue(millis < TIMEOUT_SECONDS * 1000 + 2_500, "unavailable after " + millis + " ms");
            } finally {
                database().thaw();
            }
            assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key(), FINGERPRINT, "o", LOCK), "the dead connection was dropped");
        }
    }

    /**
     * A database restart kills every pooled connection, and a pool that does not validate hands them
     * out all the same: each is discarded as it fails, and the call runs on another, so the first
     * call after the restart succeeds.
     */
    @Test
    void connectionsARestartKilledAreDiscardedAndTheCallRunsOnAnother() throws Exception {
        try (NonValidatingPool pool = new NonValidatingPool(database().dataSourceWithoutReadTimeout(), 4, Duration.ofSeconds(60));
             JdbcIdempotencyStore store = new JdbcIdempotencyStore(pool, "idempotency_keys", 2)) {
            pool.fill(); // four open connections, idle
            database().restart();
            assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key(), FINGERPRINT, "o", LOCK));
            assertEquals(4, pool.aborted.get(), "each dead connection discarded");
            assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key(), FINGERPRINT, "o", LOCK));
        }
    }

    private static String key() {
        return "connections:" + UUID.randomUUID();
    }
}
