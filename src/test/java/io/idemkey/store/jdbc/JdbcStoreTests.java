package io.idemkey.store.jdbc;

import io.idemkey.spi.AcquireResult;
import io.idemkey.spi.IdempotencyStore;
import io.idemkey.spi.IdempotencyStoreContract;
import io.idemkey.spi.Lease;
import io.idemkey.spi.RateLimit;
import io.idemkey.spi.Renewal;
import io.idemkey.spi.StoreUnavailableException;
import io.idemkey.spi.TransactionalCompletion;
import io.idemkey.testing.NonValidatingPool;
import io.idemkey.testing.TestDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The store contract on a real database, started privately on a free port, and what is the JDBC
 * store's own, whatever the database; {@link JdbcIdempotencyStoreTest} runs it on PostgreSQL,
 * {@link MariaDbIdempotencyStoreTest} on MariaDB, each with what is its own.
 */
abstract class JdbcStoreTests extends IdempotencyStoreContract {

    static final String TABLE = "idempotency_keys";

    /** The database of the subclass, started once for the class with the table created. */
    abstract TestDatabase database();

    @Override
    protected IdempotencyStore createStore() {
        return new JdbcIdempotencyStore(database().dataSource(), TABLE, 2);
    }

    /** The pool of the race's store (closed after each test). */
    private NonValidatingPool racePool;

    /**
     * The race's store borrows from a pool of 64 connections opened before the race, as a server's
     * pooled DataSource lends them: the test's own DataSource is not pooled, and 64 racers opening a
     * connection each for every key made PostgreSQL start 64 processes at once per key (20 keys took
     * 45 s on a 2-core VM, and 2 s did not always suffice to connect).
     */
    @Override
    protected IdempotencyStore raceStore() {
        racePool = new NonValidatingPool(database().dataSource(), 64, Duration.ofSeconds(30));
        try {
            racePool.fill();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        return new JdbcIdempotencyStore(racePool, TABLE, 5); // 64 statements at once on 2 cores (10 s while each racer opened its own connection)
    }

    @AfterEach
    void closeRacePool() {
        if (racePool != null) {
            racePool.close();
            racePool = null;
        }
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
        return 200; // 64 racers on pooled connections, each key a statement per racer
    }

    @Override
    protected void awaitExpiry(long writtenAtNanos, Duration ttl, BooleanSupplier expired) {
        awaitExpiryInRealTime(writtenAtNanos, ttl, expired, 5);
    }

    @Test
    void creatingTheTableTwiceIsHarmless() {
        new JdbcIdempotencyStore(database().dataSource(), TABLE, 2).createTable();
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key("after-ddl"), FINGERPRINT, "o", LONG_LOCK));
    }

    /**
     * A deployment whose table and indexes exist creates nothing and waits for nobody: a {@code
     * CREATE INDEX IF NOT EXISTS} of an index that exists would still wait for the lock every
     * transaction writing the table holds (here longer than the 2 s statement timeout), with every
     * write queued behind it meanwhile.
     */
    /**
     * An open transaction that wrote effects and joined {@code key}'s completion (acquired by
     * "owner"): the row stays locked until the caller commits or rolls it back.
     */
    private Connection transactionHoldingItsCompletion(String key) throws SQLException {
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key, FINGERPRINT, "owner", LONG_LOCK));
        Connection transaction = transactionThatWroteEffects();
        assertEquals(TransactionalCompletion.JOINED,
                inTransaction(transaction).completeInTransaction(key, "owner", RESPONSE, DAY));
        return transaction;
    }

    @Test
    void aDeploymentDoesNotWaitForTransactionsWritingTheTable() throws SQLException {
        String key = key("deployed-while-written");
        try (Connection transaction = transactionHoldingItsCompletion(key)) {
            long started = System.nanoTime();
            new JdbcIdempotencyStore(database().dataSource(), TABLE, 2).createTable();
            long tookMillis = (System.nanoTime() - started) / 1_000_000;
            // below the 2 s network timeout and the statement timeout, which a DDL statement waiting for the lock runs into
            assertTrue(tookMillis < 1900, "the deployment waited " + tookMillis + " ms for the writing transaction");
            transaction.commit();
        }
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

    /**
     * The response a client received after its record committed replaces the committed one: only
     * for the owner, only on a completed record, its expiry kept.
     */
    @Test
    void aCompletedRecordsResponseIsReplacedOnlyByItsOwnerAndKeepsItsExpiry() {
        String key = key("replaced");
        byte[] answered = "the response as written".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key, FINGERPRINT, "owner", LONG_LOCK));
        assertFalse(store.replaceResponse(key, "owner", answered), "in progress: nothing to replace");
        assertTrue(store.complete(key, "owner", RESPONSE, DAY));
        Duration before = ((AcquireResult.Completed) store.acquire(key, FINGERPRINT, "retry", LONG_LOCK)).remainingTtl();
        assertFalse(store.replaceResponse(key, "another", answered), "not the owner's");
        assertTrue(store.replaceResponse(key, "owner", answered));
        AcquireResult.Completed replayed = (AcquireResult.Completed) store.acquire(key, FINGERPRINT, "retry", LONG_LOCK);
        assertArrayEquals(answered, replayed.response());
        assertTrue(replayed.remainingTtl().compareTo(before) <= 0, "the expiry is kept: " + replayed.remainingTtl());
    }

    /**
     * The connection a record was completed with in a transaction is kept for it: the response
     * rendered again at commit replaces the recorded one through it, inside the transaction, and it
     * is given back once the transaction has ended.
     */
    @Test
    void theConnectionOfACompletionInATransactionReplacesTheResponseThereAndIsGivenBackWhenItEnds() throws SQLException {
        String key = key("kept");
        byte[] flushed = "rendered after the flush".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key, FINGERPRINT, "owner", LONG_LOCK));
        java.util.concurrent.atomic.AtomicInteger closes = new java.util.concurrent.atomic.AtomicInteger();
        try (Connection transaction = transactionThatWroteEffects()) {
            JdbcIdempotencyStore joined = inTransaction(transaction, closes);
            assertEquals(TransactionalCompletion.JOINED, joined.completeInTransaction(key, "owner", RESPONSE, DAY));
            assertEquals(0, closes.get(), "kept for the transaction");
            assertTrue(joined.replaceResponseInTransaction(key, "owner", flushed));
            transaction.commit();
            joined.transactionEnded(key, "owner");
            assertEquals(1, closes.get(), "given back once the transaction ended");
            assertFalse(joined.replaceResponseInTransaction(key, "owner", RESPONSE), "nothing kept any more");
        }
        assertArrayEquals(flushed, ((AcquireResult.Completed) store.acquire(key, FINGERPRINT, "retry", LONG_LOCK)).response());
    }

    @Test
    void tableNamesAreIdentifiersOnly() {
        assertThrows(IllegalArgumentException.class, () -> new JdbcIdempotencyStore(database().dataSource(),
                "keys; DROP TABLE users", 2));
        assertThrows(IllegalArgumentException.class, () -> JdbcIdempotencyStore.ddl("PostgreSQL", "a b"));
        new JdbcIdempotencyStore(database().dataSource(), "public.idempotency_keys", 2);
    }

    @Test
    void whileTheDatabaseIsDownEveryOperationIsUnavailableAndWorksAgainAfterItReturns() {
        String key = key("outage");
        database().stop();
        try {
            assertThrows(StoreUnavailableException.class, () -> store.acquire(key, FINGERPRINT, "o", LONG_LOCK));
            assertThrows(StoreUnavailableException.class, () -> store.complete(key, "o", RESPONSE, DAY));
            assertThrows(StoreUnavailableException.class, () -> store.release(key, "o"));
            assertThrows(StoreUnavailableException.class, () -> store.renew(key, "o", LONG_LOCK));
            assertTrue(!store.isAvailable());
        } finally {
            database().restart();
        }
        assertTrue(store.isAvailable());
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key, FINGERPRINT, "o", LONG_LOCK));
    }

    @Test
    void aDuplicateDoesNotWaitForTheTransactionThatHoldsTheRow() throws SQLException {
        String key = key("held");
        try (Connection transaction = transactionHoldingItsCompletion(key)) {
            // The row is locked until that transaction ends, longer than the 2 s statement timeout:
            // a duplicate that waited for it would time out (unavailable) instead of answering.
            for (int i = 0; i < 3; i++) {
                assertInstanceOf(AcquireResult.InProgress.class, store.acquire(key, FINGERPRINT, "duplicate-" + i, LONG_LOCK));
                sleep(1000);
            }
            assertInstanceOf(AcquireResult.Mismatch.class, store.acquire(key, OTHER_FINGERPRINT, "other", LONG_LOCK));
            transaction.commit();
        }
        AcquireResult replay = store.acquire(key, FINGERPRINT, "retry", LONG_LOCK);
        assertArrayEquals(RESPONSE, assertInstanceOf(AcquireResult.Completed.class, replay).response());
    }

    @Test
    void aRecordCompletedInATransactionThatRollsBackIsStillInProgressAndStillItsOwners() throws SQLException {
        String key = key("rolled-back");
        try (Connection transaction = transactionHoldingItsCompletion(key)) {
            transaction.rollback();
        }
        assertInstanceOf(AcquireResult.InProgress.class, store.acquire(key, FINGERPRINT, "retry", LONG_LOCK));
        assertTrue(store.release(key, "owner"));
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key, FINGERPRINT, "retry", LONG_LOCK));
    }

    @Test
    void completingInATransactionAfterATakeoverIsLostAndWritesNothing() throws SQLException {
        String key = key("taken-over");
        long writtenAt = System.nanoTime();
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key, FINGERPRINT, "slow", shortTtl()));
        awaitExpiryInRealTime(writtenAt, shortTtl(),
                () -> store.acquire(key, FINGERPRINT, "fast", LONG_LOCK) instanceof AcquireResult.Acquired, 5);
        try (Connection transaction = transactionThatWroteEffects()) {
            assertEquals(TransactionalCompletion.LOST,
                    inTransaction(transaction).completeInTransaction(key, "slow", RESPONSE, DAY));
            transaction.commit();
        }
        assertTrue(store.complete(key, "fast", new byte[] {7}, DAY));
        assertArrayEquals(new byte[] {7}, assertInstanceOf(AcquireResult.Completed.class,
                store.acquire(key, FINGERPRINT, "retry", LONG_LOCK)).response());
    }

    @Test
    void anExpiredRowThatACommittingTransactionHoldsIsReportedInProgressNotWaitedFor() throws SQLException {
        String key = key("held-expired");
        Duration lease = Duration.ofSeconds(1); // the transaction's statements and the completion land within it on a busy machine
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key, FINGERPRINT, "owner", lease));
        try (Connection transaction = transactionThatWroteEffects()) {
            assertEquals(TransactionalCompletion.JOINED,
                    inTransaction(transaction).completeInTransaction(key, "owner", RESPONSE, DAY));
            sleep(lease.toMillis() + 100); // the in-progress row others see has expired; the owner still commits
            // A takeover that waited for the row would time out (2 s) and answer "unavailable" (503, or run unguarded).
            assertInstanceOf(AcquireResult.InProgress.class, store.acquire(key, FINGERPRINT, "duplicate", LONG_LOCK));
            transaction.commit();
        }
        assertArrayEquals(RESPONSE, assertInstanceOf(AcquireResult.Completed.class,
                store.acquire(key, FINGERPRINT, "retry", LONG_LOCK)).response());
    }

    @Test
    void inAutoCommitModeNothingIsJoinedAndNothingWritten() {
        String key = key("not-joined");
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key, FINGERPRINT, "owner", LONG_LOCK));
        // auto-commit: the record would commit before the effects (a DataSource not enlisted in JTA)
        assertEquals(TransactionalCompletion.NOT_JOINED, store.completeInTransaction(key, "owner", RESPONSE, DAY));
        assertInstanceOf(AcquireResult.InProgress.class, store.acquire(key, FINGERPRINT, "retry", LONG_LOCK));
        assertTrue(store.complete(key, "owner", RESPONSE, DAY), "still the owner's to complete");
    }

    /**
     * JPA writes its entities when the persistence context flushes, at commit, after the method
     * returned: a transaction that has written nothing yet when the record is completed still joins,
     * and the record commits, or rolls back, with what it writes afterwards.
     */
    @Test
    void aTransactionThatWritesOnlyAfterTheCompletionJoinsAndCommitsOrRollsBackWithIt() throws SQLException {
        database().execute("CREATE TABLE IF NOT EXISTS later_effects (idem_key VARCHAR(255) NOT NULL)");
        for (boolean commit : new boolean[] {true, false}) {
            String key = key("flushed-later-" + commit);
            assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key, FINGERPRINT, "owner", LONG_LOCK));
            try (Connection transaction = database().dataSource().getConnection()) {
                transaction.setAutoCommit(false);
                assertEquals(TransactionalCompletion.JOINED,
                        inTransaction(transaction).completeInTransaction(key, "owner", RESPONSE, DAY));
                try (PreparedStatement flush = transaction.prepareStatement("INSERT INTO later_effects VALUES (?)")) {
                    flush.setString(1, key);
                    flush.executeUpdate();
                }
                if (commit) {
                    transaction.commit();
                } else {
                    transaction.rollback();
                }
            }
            assertEquals(commit ? 1 : 0, database().queryLong("SELECT count(*) FROM later_effects WHERE idem_key = ?", key));
            AcquireResult retry = store.acquire(key, FINGERPRINT, "retry", LONG_LOCK);
            if (commit) {
                assertArrayEquals(RESPONSE, assertInstanceOf(AcquireResult.Completed.class, retry).response());
            } else {
                assertInstanceOf(AcquireResult.InProgress.class, retry, "the owner's again, to release");
            }
        }
    }

    /**
     * A renewal that finds the row held by a transaction does not wait for it (renewals share a few
     * threads with every lease) and does not call the lease lost: it is its owner's own completion
     * being committed, or another renewal of the same lease.
     */
    @Test
    void aRenewalOfARowTheOwnersCompletionHoldsIsUnknownNotLost() throws SQLException {
        String key = key("renew-held-by-completion");
        try (Connection transaction = transactionHoldingItsCompletion(key)) {
            assertEquals(Renewal.UNKNOWN, store.renew(key, "owner", LONG_LOCK));
            transaction.commit();
        }
        assertEquals(Renewal.LOST, store.renew(key, "owner", LONG_LOCK), "completed: nothing left to renew");
        assertArrayEquals(RESPONSE, assertInstanceOf(AcquireResult.Completed.class,
                store.acquire(key, FINGERPRINT, "retry", LONG_LOCK)).response());
    }

    @Test
    void aRenewalOfARowAnotherRenewalHoldsIsUnknownAndOfAnExpiredOneLost() throws SQLException {
        String held = key("renew-held-by-renewal");
        String expired = key("renew-held-expired");
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(held, FINGERPRINT, "owner", LONG_LOCK));
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(expired, FINGERPRINT, "owner", shortTtl()));
        sleep(shortTtl().toMillis() + 100);
        try (Connection transaction = database().dataSource().getConnection()) {
            transaction.setAutoCommit(false);
            try (Statement lock = transaction.createStatement()) { // as a renewal or a takeover holds rows
                lock.execute("SELECT 1 FROM idempotency_keys WHERE record_key IN ('" + held + "', '" + expired + "') FOR UPDATE");
            }
            assertArrayEquals(new Renewal[] {Renewal.UNKNOWN, Renewal.LOST}, store.renew(List.of(
                    new Lease(held, "owner", LONG_LOCK), new Lease(expired, "owner", LONG_LOCK))));
            transaction.rollback();
        }
        assertEquals(Renewal.RENEWED, store.renew(held, "owner", LONG_LOCK));
    }

    /** Applications and servers deploying at once all create the table: each starts, none fails on the others' catalog rows. */
    @Test
    void severalDeploymentsCreatingTheTableAtOnceAllStart() throws Exception {
        for (int round = 0; round < 5; round++) {
            String table = "created_at_once_" + round;
            ExecutorService deployments = Executors.newFixedThreadPool(6);
            try {
                List<Future<?>> created = new ArrayList<>();
                CountDownLatch go = new CountDownLatch(1);
                for (int i = 0; i < 6; i++) {
                    created.add(deployments.submit(() -> {
                        go.await();
                        new JdbcIdempotencyStore(database().dataSource(), table, 2).createTable();
                        return null;
                    }));
                }
                go.countDown();
                for (Future<?> deployment : created) {
                    deployment.get(30, TimeUnit.SECONDS);
                }
            } finally {
                deployments.shutdown();
            }
        }
    }

    /**
     * A storm of concurrent retries of one completed key: each request's statement holds the row for
     * a moment, and a request that meets it held is neither let through uncounted nor made to wait:
     * beyond the limit every one is refused (reviewed: 785 of 1,000 answered as replays before).
     */
    @Test
    void aStormOfConcurrentRetriesOfOneKeyIsLimitedAsSequentialOnesAre() throws Exception {
        RateLimit limit = new RateLimit(5, Duration.ofSeconds(60));
        String key = key("storm");
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key, FINGERPRINT, "first", LONG_LOCK, limit));
        assertTrue(store.complete(key, "first", RESPONSE, DAY));
        int threads = 16;
        int each = 25;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<int[]>> results = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int thread = t;
            results.add(pool.submit(() -> {
                start.await();
                int[] counts = new int[2]; // replays, refusals
                for (int i = 0; i < each; i++) {
                    AcquireResult result = store.acquire(key, FINGERPRINT, "retry-" + thread + "-" + i, LONG_LOCK, limit);
                    if (result instanceof AcquireResult.Completed) {
                        counts[0]++;
                    } else {
                        assertInstanceOf(AcquireResult.RateLimited.class, result);
                        counts[1]++;
                    }
                }
                return counts;
            }));
        }
        start.countDown();
        int replays = 0;
        int refused = 0;
        for (Future<int[]> result : results) {
            replays += result.get(60, TimeUnit.SECONDS)[0];
            refused += result.get()[1];
        }
        pool.shutdown();
        assertEquals(threads * each, replays + refused);
        assertTrue(replays <= 4, replays + " replays: beyond the limit (the first request and 4 more)");
    }

    /** A released key's count lasts to the end of its window: a retry storm of failures is limited too. */
    @Test
    void aReleaseKeepsTheKeysCountForTheRestOfItsWindowAndTheCleanupWaitsForIt() throws SQLException {
        RateLimit limit = new RateLimit(2, Duration.ofSeconds(2));
        String key = key("counted-release");
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key, FINGERPRINT, "owner-1", LONG_LOCK, limit));
        assertTrue(store.release(key, "owner-1"));
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key, FINGERPRINT, "owner-2", LONG_LOCK, limit),
                "free again, and counted: 2 of 2");
        assertTrue(store.release(key, "owner-2"));
        assertInstanceOf(AcquireResult.RateLimited.class, store.acquire(key, FINGERPRINT, "owner-3", LONG_LOCK, limit));
        JdbcIdempotencyStore jdbc = (JdbcIdempotencyStore) store;
        jdbc.deleteExpired(100_000);
        assertEquals(1, count("record_key = '" + key + "'"), "kept while its window lasts");
        // the window ends on the database's clock: the cleanup deletes the row once it has
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100)).until(() ->
                jdbc.deleteExpired(100_000) >= 0 && count("record_key = '" + key + "'") == 0);
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key, FINGERPRINT, "owner-4", LONG_LOCK, limit));
    }

    /** A table made before the rate limit's columns existed gets them when the store starts. */
    @Test
    void aTableCreatedBeforeTheRateLimitsColumnsGetsThem() throws SQLException {
        String old = "before_rate_limits";
        createTableWithoutTheCountColumns(old);
        JdbcIdempotencyStore upgraded = new JdbcIdempotencyStore(database().dataSource(), old, 2);
        upgraded.createTable();
        assertEquals(java.util.Optional.empty(), upgraded.missingFromTable());
        RateLimit limit = new RateLimit(1, Duration.ofSeconds(60));
        assertInstanceOf(AcquireResult.Acquired.class, upgraded.acquire("k", FINGERPRINT, "o", LONG_LOCK, limit));
        assertInstanceOf(AcquireResult.RateLimited.class, upgraded.acquire("k", FINGERPRINT, "o2", LONG_LOCK, limit));
    }

    /**
     * A table the application manages (create-table=false) is checked at deployment: missing, or made
     * before the rate limit's columns, it is named with the statement that fixes it.
     */
    @Test
    void aTableTheApplicationManagesIsCheckedForWhatThisVersionWrites() throws SQLException {
        JdbcIdempotencyStore absent = new JdbcIdempotencyStore(database().dataSource(), "never_created", 2);
        String missing = absent.missingFromTable().orElseThrow();
        assertTrue(missing.contains("does not exist") && missing.contains("CREATE TABLE"), missing);

        createTableWithoutTheCountColumns("managed_before_rate_limits");
        JdbcIdempotencyStore old = new JdbcIdempotencyStore(database().dataSource(), "managed_before_rate_limits", 2);
        missing = old.missingFromTable().orElseThrow();
        assertTrue(missing.contains("ALTER TABLE managed_before_rate_limits ADD COLUMN"), missing);

        assertEquals(java.util.Optional.empty(), ((JdbcIdempotencyStore) store).missingFromTable());

        // a table of the same name in another schema (PostgreSQL) or database (MariaDB) is not this one
        // (reviewed: the driver's column metadata found it there, so a missing table passed the check)
        database().execute(database().name().equals("MariaDB") ? "CREATE DATABASE IF NOT EXISTS elsewhere"
                : "CREATE SCHEMA IF NOT EXISTS elsewhere");
        new JdbcIdempotencyStore(database().dataSource(), "elsewhere.only_elsewhere", 2).createTable();
        missing = new JdbcIdempotencyStore(database().dataSource(), "only_elsewhere", 2).missingFromTable().orElseThrow();
        assertTrue(missing.contains("does not exist"), missing);
    }

    private void createTableWithoutTheCountColumns(String old) {
        database().execute(database().name().equals("MariaDB")
                ? "CREATE TABLE " + old + " (record_key VARCHAR(3072) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,"
                  + " completed BOOLEAN NOT NULL, fingerprint VARBINARY(64) NOT NULL,"
                  + " owner_token VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL, response MEDIUMBLOB,"
                  + " expires_at DATETIME(6) NOT NULL) ENGINE = InnoDB"
                : "CREATE TABLE " + old + " (record_key TEXT COLLATE \"C\" NOT NULL PRIMARY KEY, completed BOOLEAN NOT NULL,"
                  + " fingerprint BYTEA NOT NULL, owner_token TEXT NOT NULL, response BYTEA, expires_at TIMESTAMPTZ NOT NULL)");
    }

    @Test
    void aTableThatCouldNotBeCreatedAtStartIsCreatedOnceTheDatabaseAnswers() throws SQLException {
        JdbcIdempotencyStore late = new JdbcIdempotencyStore(database().dataSource(), "created_late", 2);
        database().stop();
        try {
            assertThrows(StoreUnavailableException.class, late::createTable);
        } finally {
            database().restart();
        }
        assertInstanceOf(AcquireResult.Acquired.class, late.acquire("k", FINGERPRINT, "o", LONG_LOCK));
    }

    /** A transaction that wrote the method's effects. */
    Connection transactionThatWroteEffects() throws SQLException {
        Connection transaction = database().dataSource().getConnection();
        transaction.setAutoCommit(false);
        writeEffects(transaction);
        return transaction;
    }

    void writeEffects(Connection transaction) throws SQLException {
        try (Statement statement = transaction.createStatement()) {
            statement.execute("CREATE TABLE IF NOT EXISTS effects (idem_key VARCHAR(255))");
        }
        transaction.commit(); // (DDL commits on MariaDB anyway)
        try (Statement statement = transaction.createStatement()) {
            statement.execute("INSERT INTO effects VALUES ('an effect')");
        }
    }

    @Test
    void deleteExpiredDeletesExpiredRowsOnlyAtMostABatchAtATime() throws SQLException {
        assertDeletesExpiredRowsOnlyAtMostABatchAtATime((JdbcIdempotencyStore) store);
        assertEquals(0, count("record_key LIKE '" + key("expiring-") + "%'"));
    }

    /** Five expired rows and a live one: batches of 3 delete 3, then 2, then none, and the live row stays. */
    void assertDeletesExpiredRowsOnlyAtMostABatchAtATime(JdbcIdempotencyStore jdbc) {
        jdbc.deleteExpired(100_000); // what other tests left
        for (int i = 0; i < 5; i++) {
            jdbc.acquire(key("expiring-" + i), FINGERPRINT, "o", Duration.ofMillis(1));
        }
        String live = key("live");
        jdbc.acquire(live, FINGERPRINT, "o", LONG_LOCK);
        sleep(50);
        assertEquals(3, jdbc.deleteExpired(3));
        assertEquals(2, jdbc.deleteExpired(3));
        assertEquals(0, jdbc.deleteExpired(3));
        assertInstanceOf(AcquireResult.InProgress.class, jdbc.acquire(live, FINGERPRINT, "other", LONG_LOCK));
    }

    /**
     * The store as it is inside a JTA transaction: every connection it borrows is that transaction's
     * (not in auto-commit mode, and closing it does not end the transaction).
     */
    static JdbcIdempotencyStore inTransaction(Connection transaction) {
        return inTransaction(transaction, new java.util.concurrent.atomic.AtomicInteger());
    }

    /** As {@link #inTransaction(Connection)}, counting the handles given back ({@code close()}). */
    static JdbcIdempotencyStore inTransaction(Connection transaction, java.util.concurrent.atomic.AtomicInteger closes) {
        Connection unclosable = (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(),
                new Class<?>[] {Connection.class}, (proxy, method, args) -> {
                    if (method.getName().equals("close")) {
                        closes.incrementAndGet();
                        return null;
                    }
                    try {
                        return method.invoke(transaction, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
        DataSource enlisting = (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(),
                new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
                    if (method.getName().equals("getConnection")) {
                        return unclosable;
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
        return new JdbcIdempotencyStore(enlisting, TABLE, 2);
    }

    long count(String where) {
        return database().queryLong("SELECT count(*) FROM " + TABLE + " WHERE " + where);
    }

}
