package io.idemkey.spi;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The behaviour every {@link IdempotencyStore} owes the engine: atomic acquire, fencing on the owner
 * token, expiry by the store. One subclass per store supplies the store and a way to let time pass.
 */
public abstract class IdempotencyStoreContract {

    /** A lock TTL that never runs out during a test. */
    protected static final Duration LONG_LOCK = Duration.ofSeconds(60);
    /** A completed record's TTL that never runs out during a test. */
    protected static final Duration DAY = Duration.ofHours(24);
    protected static final byte[] FINGERPRINT = fingerprint(1);
    protected static final byte[] OTHER_FINGERPRINT = fingerprint(2);
    /** Every byte value, to prove the store is binary-safe. */
    protected static final byte[] RESPONSE = allByteValues();

    protected IdempotencyStore store;
    private final String namespace = "contract:" + UUID.randomUUID() + ":";

    /** A new store, empty as far as this test's keys are concerned. */
    protected abstract IdempotencyStore createStore();

    /** A TTL short enough to let run out in this store. */
    protected abstract Duration shortTtl();

    /**
     * Lets {@code ttl}, counted from a write that began at {@code writtenAtNanos} ({@link System#nanoTime}),
     * run out for this store, and asserts that {@code expired} did not hold before the TTL ended and
     * holds after it. {@code expired} must be harmless to call while the record still lives.
     */
    protected abstract void awaitExpiry(long writtenAtNanos, Duration ttl, BooleanSupplier expired);

    /** Lets {@code duration} (a few short TTLs at most) pass for this store. */
    protected abstract void passTime(Duration duration);

    /** How many fresh keys the acquire race runs on. */
    protected int raceIterations() {
        return 1_000;
    }

    /** The store the 64 racers share (closed after the race if it is not {@link #store}): this one by default. */
    protected IdempotencyStore raceStore() {
        return store;
    }

    /**
     * {@link #awaitExpiry} for a store that expires records by real time: polls until
     * {@code expired} holds (5 s past the TTL at the most), and asserts it did not happen before the
     * TTL, less {@code earlyMillis} of clock granularity.
     */
    protected static void awaitExpiryInRealTime(long writtenAtNanos, Duration ttl, BooleanSupplier expired,
                                                long earlyMillis) {
        long deadline = System.nanoTime() + ttl.toNanos() + TimeUnit.SECONDS.toNanos(5);
        while (!expired.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("still there " + ttl + " plus 5 s after it was written");
            }
            sleep(5);
        }
        long livedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - writtenAtNanos);
        assertTrue(livedMillis >= ttl.toMillis() - earlyMillis, "expired after " + livedMillis + " ms, before its TTL of " + ttl);
    }

    protected static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @BeforeEach
    void openStore() {
        store = createStore();
    }

    @AfterEach
    void closeStore() {
        store.close();
    }

    protected String key(String name) {
        return namespace + name;
    }

    protected static byte[] fingerprint(int seed) {
        byte[] fingerprint = new byte[32];
        for (int i = 0; i < fingerprint.length; i++) {
            fingerprint[i] = (byte) (seed * 31 + i * 7);
        }
        return fingerprint;
    }

    private static byte[] allByteValues() {
        byte[] bytes = new byte[512];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) i;
        }
        return bytes;
    }

    private AcquireResult acquire(String key, byte[] fingerprint, String owner) {
        return store.acquire(key, fingerprint, owner, LONG_LOCK);
    }

    /**
     * A completion as the engine makes it: told the fingerprint the record was acquired with (every
     * record these tests complete was acquired with {@link #FINGERPRINT}; an owner that never
     * acquired it is refused all the same).
     */
    private boolean complete(String key, String owner, byte[] response, Duration ttl) {
        return store.complete(key, owner, FINGERPRINT, response, ttl);
    }

    private void assertStillInProgress(String key) {
        assertInstanceOf(AcquireResult.InProgress.class, acquire(key, FINGERPRINT, "observer-" + UUID.randomUUID()));
    }

    private void assertCompletedWith(String key, byte[] response) {
        AcquireResult.Completed completed = assertInstanceOf(AcquireResult.Completed.class,
                acquire(key, FINGERPRINT, "observer-" + UUID.randomUUID()));
        assertArrayEquals(response, completed.response());
    }

    @Test
    void firstAcquireOfAKeyAcquires() {
        assertInstanceOf(AcquireResult.Acquired.class, acquire(key("first"), FINGERPRINT, "owner-1"));
    }

    @Test
    void sameFingerprintWhileInProgressIsInProgressWithRemainingLeaseAtMostLockTtl() {
        String key = key("in-progress");
        Duration lockTtl = Duration.ofSeconds(30);
        store.acquire(key, FINGERPRINT, "owner-1", lockTtl);
        AcquireResult.InProgress inProgress = assertInstanceOf(AcquireResult.InProgress.class,
                store.acquire(key, FINGERPRINT, "owner-2", lockTtl));
        assertTrue(inProgress.remainingLease().compareTo(lockTtl) <= 0, inProgress.toString());
        assertTrue(inProgress.remainingLease().compareTo(lockTtl.minusSeconds(5)) > 0, inProgress.toString());
    }

    @Test
    void differentFingerprintWhileInProgressIsMismatchNotInProgress() {
        String key = key("mismatch-in-progress");
        acquire(key, FINGERPRINT, "owner-1");
        assertInstanceOf(AcquireResult.Mismatch.class, acquire(key, OTHER_FINGERPRINT, "owner-2"));
        assertStillInProgress(key);
    }

    @Test
    void afterCompleteSameFingerprintGetsTheExactResponseBytes() {
        String key = key("complete");
        acquire(key, FINGERPRINT, "owner-1");
        assertTrue(complete(key, "owner-1", RESPONSE, DAY));
        assertCompletedWith(key, RESPONSE);
        assertCompletedWith(key, RESPONSE);
    }

    @Test
    void emptyResponseIsStoredAndReturnedEmpty() {
        String key = key("empty-response");
        acquire(key, FINGERPRINT, "owner-1");
        assertTrue(complete(key, "owner-1", new byte[0], DAY));
        assertCompletedWith(key, new byte[0]);
    }

    @Test
    void differentFingerprintAfterCompleteIsMismatch() {
        String key = key("mismatch-completed");
        acquire(key, FINGERPRINT, "owner-1");
        complete(key, "owner-1", RESPONSE, DAY);
        assertInstanceOf(AcquireResult.Mismatch.class, acquire(key, OTHER_FINGERPRINT, "owner-2"));
        assertCompletedWith(key, RESPONSE);
    }

    @Test
    void releaseDeletesTheRecordSoTheNextAcquireAcquires() {
        String key = key("release");
        acquire(key, FINGERPRINT, "owner-1");
        assertTrue(store.release(key, "owner-1"));
        assertInstanceOf(AcquireResult.Acquired.class, acquire(key, FINGERPRINT, "owner-2"));
    }

    @Test
    void releaseForgetsTheFingerprintToo() {
        String key = key("release-fingerprint");
        acquire(key, FINGERPRINT, "owner-1");
        store.release(key, "owner-1");
        assertInstanceOf(AcquireResult.Acquired.class, acquire(key, OTHER_FINGERPRINT, "owner-2"));
    }

    @Test
    void staleTokenCannotCompleteReleaseOrRenewARecordANewerOwnerHolds() {
        String key = key("fencing");
        Duration shortLock = shortTtl();
        long writtenAt = System.nanoTime();
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key, FINGERPRINT, "owner-1", shortLock));
        awaitExpiry(writtenAt, shortLock,
                () -> store.acquire(key, FINGERPRINT, "owner-2", LONG_LOCK) instanceof AcquireResult.Acquired);

        assertFalse(complete(key, "owner-1", "stale".getBytes(), DAY));
        assertFalse(store.release(key, "owner-1"));
        assertEquals(Renewal.LOST, store.renew(key, "owner-1", LONG_LOCK));
        assertStillInProgress(key);

        assertTrue(complete(key, "owner-2", RESPONSE, DAY));
        assertFalse(complete(key, "owner-1", "stale".getBytes(), DAY));
        assertFalse(store.release(key, "owner-1"));
        assertCompletedWith(key, RESPONSE);
    }

    @Test
    void completedRecordIsFinalButCompletingAgainWithTheSameTokenReportsSuccess() {
        String key = key("completed-is-final");
        acquire(key, FINGERPRINT, "owner-1");
        assertTrue(complete(key, "owner-1", RESPONSE, DAY));
        assertTrue(complete(key, "owner-1", "second".getBytes(), DAY), "a retried call whose reply was lost");
        assertFalse(store.release(key, "owner-1"));
        assertEquals(Renewal.LOST, store.renew(key, "owner-1", LONG_LOCK));
        assertCompletedWith(key, RESPONSE);
    }

    @Test
    void anotherTokenCannotCompleteReleaseOrRenewARunningRecord() {
        String key = key("not-the-owner");
        acquire(key, FINGERPRINT, "owner-1");
        assertFalse(complete(key, "intruder", "x".getBytes(), DAY));
        assertFalse(store.release(key, "intruder"));
        assertEquals(Renewal.LOST, store.renew(key, "intruder", LONG_LOCK));
        assertStillInProgress(key);
        assertTrue(complete(key, "owner-1", RESPONSE, DAY));
    }

    @Test
    void completingOrRenewingAnUnknownKeyReportsALostLeaseReleasingItReportsTheKeyFree() {
        String key = key("unknown");
        assertFalse(complete(key, "owner-1", RESPONSE, DAY));
        assertEquals(Renewal.LOST, store.renew(key, "owner-1", LONG_LOCK));
        assertTrue(store.release(key, "owner-1"), "the key is free, which is what release is for");
        assertInstanceOf(AcquireResult.Acquired.class, acquire(key, FINGERPRINT, "owner-2"));
    }

    @Test
    void inProgressRecordExpiresAfterLockTtl() {
        String key = key("lock-expiry");
        Duration shortLock = shortTtl();
        long writtenAt = System.nanoTime();
        store.acquire(key, FINGERPRINT, "owner-1", shortLock);
        awaitExpiry(writtenAt, shortLock,
                () -> store.acquire(key, OTHER_FINGERPRINT, "owner-2", LONG_LOCK) instanceof AcquireResult.Acquired);
        assertEquals(Renewal.LOST, store.renew(key, "owner-1", LONG_LOCK));
    }

    @Test
    void completedRecordExpiresAfterTtl() {
        String key = key("ttl-expiry");
        acquire(key, FINGERPRINT, "owner-1");
        Duration shortTtl = shortTtl();
        long writtenAt = System.nanoTime();
        assertTrue(complete(key, "owner-1", RESPONSE, shortTtl));
        awaitExpiry(writtenAt, shortTtl,
                () -> store.acquire(key, FINGERPRINT, "owner-2", LONG_LOCK) instanceof AcquireResult.Acquired);
    }

    @Test
    void completeReplacesTheLockTtlWithTheRecordTtl() {
        String key = key("ttl-replaces-lock");
        Duration shortLock = shortTtl().multipliedBy(3); // the completion lands within it on a busy machine
        store.acquire(key, FINGERPRINT, "owner-1", shortLock);
        assertTrue(complete(key, "owner-1", RESPONSE, DAY));
        passTime(shortLock.plus(shortTtl()));
        assertCompletedWith(key, RESPONSE);
    }

    @Test
    void renewExtendsTheLease() {
        String key = key("renew");
        store.acquire(key, FINGERPRINT, "owner-1", Duration.ofSeconds(10)); // far below the 30 s checked after renewing
        assertEquals(Renewal.RENEWED, store.renew(key, "owner-1", LONG_LOCK));
        AcquireResult.InProgress inProgress = assertInstanceOf(AcquireResult.InProgress.class,
                acquire(key, FINGERPRINT, "owner-2"));
        assertTrue(inProgress.remainingLease().compareTo(Duration.ofSeconds(30)) > 0, inProgress.toString());
        assertTrue(complete(key, "owner-1", RESPONSE, DAY));
    }

    @Test
    void renewingSeveralLeasesAtOnceExtendsEachOwnedOneAndReportsEachLostOne() {
        String owned = key("renew-all-owned");
        String taken = key("renew-all-taken");
        String completed = key("renew-all-completed");
        String unknown = key("renew-all-unknown");
        store.acquire(owned, FINGERPRINT, "owner-1", Duration.ofSeconds(10)); // far below the 30 s checked after renewing
        store.acquire(taken, FINGERPRINT, "owner-2", LONG_LOCK);
        store.acquire(completed, FINGERPRINT, "owner-3", LONG_LOCK);
        assertTrue(complete(completed, "owner-3", RESPONSE, DAY));

        Renewal[] renewed = store.renew(List.of(
                new Lease(owned, "owner-1", LONG_LOCK),
                new Lease(taken, "stale-owner", LONG_LOCK),
                new Lease(completed, "owner-3", LONG_LOCK),
                new Lease(unknown, "owner-4", LONG_LOCK),
                new Lease(taken, "owner-2", LONG_LOCK)));

        assertArrayEquals(new Renewal[]{Renewal.RENEWED, Renewal.LOST, Renewal.LOST, Renewal.LOST, Renewal.RENEWED}, renewed,
                "in the order asked");
        AcquireResult.InProgress inProgress = assertInstanceOf(AcquireResult.InProgress.class,
                acquire(owned, FINGERPRINT, "owner-5"));
        assertTrue(inProgress.remainingLease().compareTo(Duration.ofSeconds(30)) > 0, inProgress.toString());
        assertCompletedWith(completed, RESPONSE);
        assertInstanceOf(AcquireResult.Acquired.class, acquire(unknown, FINGERPRINT, "owner-6"), "no record made");
        assertEquals(0, store.renew(List.of()).length);
    }

    @Test
    void sameTokenAcquiringTwiceAcquiresAgainAndStillOwnsTheRecord() {
        String key = key("re-acquire");
        assertInstanceOf(AcquireResult.Acquired.class, acquire(key, FINGERPRINT, "owner-1"));
        assertInstanceOf(AcquireResult.Acquired.class, acquire(key, FINGERPRINT, "owner-1"));
        assertStillInProgress(key);
        assertTrue(complete(key, "owner-1", RESPONSE, DAY));
        assertCompletedWith(key, RESPONSE);
    }

    @Test
    void sameTokenDoesNotReacquireACompletedRecord() {
        String key = key("re-acquire-completed");
        acquire(key, FINGERPRINT, "owner-1");
        complete(key, "owner-1", RESPONSE, DAY);
        AcquireResult again = acquire(key, FINGERPRINT, "owner-1");
        assertArrayEquals(RESPONSE, assertInstanceOf(AcquireResult.Completed.class, again).response());
    }

    @Test
    void keysAreIndependent() {
        acquire(key("a"), FINGERPRINT, "owner-a");
        assertInstanceOf(AcquireResult.Acquired.class, acquire(key("b"), OTHER_FINGERPRINT, "owner-b"));
        assertTrue(complete(key("a"), "owner-a", "a".getBytes(), DAY));
        assertTrue(store.release(key("b"), "owner-b"));
        assertCompletedWith(key("a"), "a".getBytes());
    }

    @Test
    void rateLimitRefusesRequestsBeyondThePermitsWhateverTheRecordsStateAndChangesNothing() {
        assumeTrue(store.countsRequests(), "this store does not count requests");
        RateLimit limit = new RateLimit(3, Duration.ofSeconds(60));
        String key = key("rate-limited");
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key, FINGERPRINT, "owner-1", LONG_LOCK, limit));
        assertInstanceOf(AcquireResult.InProgress.class, store.acquire(key, FINGERPRINT, "owner-2", LONG_LOCK, limit));
        assertInstanceOf(AcquireResult.Mismatch.class, store.acquire(key, OTHER_FINGERPRINT, "owner-3", LONG_LOCK, limit));
        AcquireResult.RateLimited limited = assertInstanceOf(AcquireResult.RateLimited.class,
                store.acquire(key, FINGERPRINT, "owner-4", LONG_LOCK, limit));
        assertTrue(limited.windowLeft().compareTo(Duration.ofSeconds(55)) > 0
                && limited.windowLeft().compareTo(Duration.ofSeconds(60)) <= 0, limited.toString());
        assertStillInProgress(key); // not counted: no limit given
        assertTrue(complete(key, "owner-1", RESPONSE, DAY), "the refused request did not touch the record");
        assertInstanceOf(AcquireResult.RateLimited.class, store.acquire(key, FINGERPRINT, "owner-5", LONG_LOCK, limit),
                "a completed record is no way round the limit");
        assertCompletedWith(key, RESPONSE);
    }

    @Test
    void rateLimitCountsEachKeySeparately() {
        assumeTrue(store.countsRequests(), "this store does not count requests");
        RateLimit limit = new RateLimit(1, Duration.ofSeconds(60));
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key("limited-a"), FINGERPRINT, "a", LONG_LOCK, limit));
        assertInstanceOf(AcquireResult.RateLimited.class, store.acquire(key("limited-a"), FINGERPRINT, "a2", LONG_LOCK, limit));
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key("limited-b"), FINGERPRINT, "b", LONG_LOCK, limit));
    }

    @Test
    void rateLimitWindowEndsAndTheCountStartsAgain() {
        assumeTrue(store.countsRequests(), "this store does not count requests");
        RateLimit limit = new RateLimit(1, Duration.ofSeconds(1));
        String key = key("limited-window");
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key, FINGERPRINT, "owner-1", LONG_LOCK, limit));
        assertInstanceOf(AcquireResult.RateLimited.class, store.acquire(key, FINGERPRINT, "owner-2", LONG_LOCK, limit));
        passTime(Duration.ofMillis(1_100));
        assertInstanceOf(AcquireResult.InProgress.class, store.acquire(key, FINGERPRINT, "owner-3", LONG_LOCK, limit),
                "a new window: counted, and answered from the record again");
        assertInstanceOf(AcquireResult.RateLimited.class, store.acquire(key, FINGERPRINT, "owner-4", LONG_LOCK, limit));
    }

    @Test
    void sixtyFourThreadsRacingForAFreshKeyYieldExactlyOneAcquiredAndTheRestInProgress() throws Exception {
        int threads = 64;
        int iterations = raceIterations();
        AcquireResult[][] results = new AcquireResult[iterations][threads];
        CyclicBarrier barrier = new CyclicBarrier(threads);
        ExecutorService executor = Executors.newFixedThreadPool(threads);
        IdempotencyStore racing = raceStore();
        try {
            List<Future<?>> racers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                racers.add(executor.submit(() -> {
                    for (int i = 0; i < iterations; i++) {
                        barrier.await(30, TimeUnit.SECONDS);
                        results[i][thread] = racing.acquire(key("race-" + i), FINGERPRINT,
                                "owner-" + thread + "-" + i, LONG_LOCK);
                    }
                    return null;
                }));
            }
            List<Throwable> failures = new ArrayList<>();
            for (Future<?> racer : racers) {
                try {
                    racer.get(120, TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    failures.add(e.getCause());
                }
            }
            // the racer that failed first breaks the barrier for the others: its failure is the one to see
            failures.sort(java.util.Comparator.comparing(failure -> failure instanceof BrokenBarrierException));
            if (!failures.isEmpty()) {
                throw new AssertionError(failures.size() + " racers failed, first: " + failures.get(0), failures.get(0));
            }
        } finally {
            executor.shutdownNow();
            if (racing != store) {
                racing.close();
            }
        }
        for (int i = 0; i < iterations; i++) {
            int acquired = 0;
            for (AcquireResult result : results[i]) {
                if (result instanceof AcquireResult.Acquired) {
                    acquired++;
                } else {
                    assertInstanceOf(AcquireResult.InProgress.class, result, "iteration " + i);
                }
            }
            assertEquals(1, acquired, "iteration " + i + ": acquired by " + acquired + " threads");
        }
    }

    // --- StoreInspection, the operators' capability (issue 29) ---

    private StoreInspection inspection() {
        assumeTrue(store instanceof StoreInspection, store + " offers no inspection");
        return (StoreInspection) store;
    }

    @Test
    void inspectionShowsARecordInProgressThenCompletedAndNothingWhereThereIsNone() {
        StoreInspection inspection = inspection();
        String key = key("inspected");
        assertTrue(inspection.inspect(key).isEmpty());
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key, FINGERPRINT, "owner-1", LONG_LOCK));
        StoreInspection.StoredRecord running = inspection.inspect(key).orElseThrow();
        assertEquals(key, running.recordKey());
        assertFalse(running.completed());
        assertArrayEquals(FINGERPRINT, running.fingerprint());
        assertEquals("owner-1", running.ownerToken());
        assertTrue(running.timeLeft().compareTo(LONG_LOCK) <= 0 && running.timeLeft().compareTo(LONG_LOCK.minusSeconds(30)) > 0,
                "lease left " + running.timeLeft());
        assertEquals(0, running.response().length);

        assertTrue(complete(key, "owner-1", RESPONSE, DAY));
        StoreInspection.StoredRecord done = inspection.inspect(key).orElseThrow();
        assertTrue(done.completed());
        assertArrayEquals(FINGERPRINT, done.fingerprint());
        assertArrayEquals(RESPONSE, done.response());
        assertTrue(done.timeLeft().compareTo(DAY) <= 0 && done.timeLeft().compareTo(DAY.minusMinutes(1)) > 0,
                "TTL left " + done.timeLeft());
    }

    @Test
    void purgeDeletesACompletedRecordAndAnInProgressOneOnlyWhenForced() {
        StoreInspection inspection = inspection();
        String running = key("purged-running");
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(running, FINGERPRINT, "owner-1", LONG_LOCK));
        assertEquals(StoreInspection.Purge.IN_PROGRESS, inspection.purge(running, false));
        assertTrue(inspection.inspect(running).isPresent(), "refused: still there");
        assertEquals(StoreInspection.Purge.PURGED, inspection.purge(running, true));
        assertTrue(inspection.inspect(running).isEmpty());
        assertFalse(complete(running, "owner-1", RESPONSE, DAY), "its owner lost the lease");
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(running, FINGERPRINT, "owner-2", LONG_LOCK),
                "a retry runs again");

        String done = key("purged-done");
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(done, FINGERPRINT, "owner-1", LONG_LOCK));
        assertTrue(complete(done, "owner-1", RESPONSE, DAY));
        assertEquals(StoreInspection.Purge.PURGED, inspection.purge(done, false));
        assertEquals(StoreInspection.Purge.ABSENT, inspection.purge(done, false));
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(done, FINGERPRINT, "owner-2", LONG_LOCK),
                "the purged key is free");
    }

    @Test
    void thePagesOfRecordsInProgressHoldEachOnceAndNoCompletedOne() {
        StoreInspection inspection = inspection();
        String prefix = key("walk:");
        Set<String> running = new HashSet<>();
        for (int i = 0; i < 23; i++) {
            String key = prefix + "running-" + i;
            assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key, FINGERPRINT, "owner-" + i, LONG_LOCK));
            running.add(key);
        }
        for (int i = 0; i < 4; i++) {
            String key = prefix + "done-" + i;
            assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key, FINGERPRINT, "owner", LONG_LOCK));
            assertTrue(complete(key, "owner", RESPONSE, DAY));
        }
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(key("elsewhere"), FINGERPRINT, "o", LONG_LOCK));

        List<String> seen = new ArrayList<>();
        String cursor = "";
        int pages = 0;
        do {
            StoreInspection.Page page = inspection.inProgress(prefix, cursor, 5);
            for (StoreInspection.StoredRecord record : page.records()) {
                assertFalse(record.completed(), record.recordKey());
                assertTrue(record.ownerToken().startsWith("owner-"), record.ownerToken());
                seen.add(record.recordKey());
            }
            cursor = page.nextCursor();
            assertTrue(++pages < 100, "the pages end");
        } while (!cursor.isEmpty());
        assertEquals(running, new HashSet<>(seen), "every record in progress under the prefix, nothing else");
        assertEquals(running.size(), seen.size(), "each once: " + seen);

        assertThrows(IllegalArgumentException.class, () -> inspection.inProgress(prefix, "", 0));
        assertThrows(IllegalArgumentException.class, () -> inspection.inProgress(prefix, "", 1001));
        assertThrows(IllegalArgumentException.class, () -> inspection.inProgress(prefix, "not-a-cursor", 5));
    }
}
