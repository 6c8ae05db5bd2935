package io.idemkey.core;

import io.idemkey.core.IdempotencyMetrics.Event;
import io.idemkey.spi.AcquireResult;
import io.idemkey.spi.IdempotencyStore;
import io.idemkey.spi.Lease;
import io.idemkey.spi.Renewal;
import io.idemkey.spi.TransactionalCompletion;
import io.idemkey.store.memory.InMemoryIdempotencyStore;
import io.idemkey.testing.FlakyStore;
import io.idemkey.testing.ManualClock;
import io.idemkey.testing.ManualScheduler;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An execution whose response is recorded inside the method's transaction: completed when the
 * transaction commits, back in progress (and then released) when it rolls back, and told when its
 * lease is lost so that the transaction rolls back. The store here joins "transactions" the way the
 * JDBC store joins JTA ones: its completion becomes visible on commit only.
 */
class TransactionalCompletionTest {

    private static final Duration LOCK_TTL = Duration.ofSeconds(30);
    private static final IdempotencyPolicy POLICY =
            new IdempotencyPolicy(Duration.ofHours(24), LOCK_TTL, true, Set.of(), false, Duration.ZERO);
    private static final byte[] FINGERPRINT = {1, 2, 3};
    private static final StoredResponse CREATED = new StoredResponse(201,
            List.of(new StoredResponse.Header("Content-Type", "application/json")), "{\"id\":1}".getBytes(StandardCharsets.UTF_8));

    private final ManualClock clock = new ManualClock();
    private final ManualScheduler scheduler = new ManualScheduler(clock);
    private final InMemoryIdempotencyStore memory = new InMemoryIdempotencyStore(clock);
    private final TransactionalStore store = new TransactionalStore(memory);
    private final IdempotencyMetrics metrics = new IdempotencyMetrics();
    private final IdempotencyEngine engine = IdempotencyEngine.builder(store, scheduler).clock(clock).metrics(metrics).build();

    @Test
    void aRecordWrittenInATransactionIsCompletedWhenItCommitsAndNoLongerRenewed() {
        Execution execution = begin("k1");
        assertEquals(TransactionalCompletion.JOINED, execution.completeInTransaction(CREATED));
        assertFalse(execution.isRunning(), "nothing else may finish it while the transaction commits");
        int renewals = store.renewals.get();
        scheduler.advance(LOCK_TTL.multipliedBy(2));
        assertEquals(renewals, store.renewals.get(), "a renewal would wait for the row the transaction holds");

        store.commit();
        execution.transactionEnded(true);
        assertEquals(1, metrics.get(Event.COMPLETED));
        assertInstanceOf(Decision.Replay.class, engine.begin("k1", "k1", FINGERPRINT, POLICY, "POST /x"));
    }

    /**
     * A renewal sent just before the completion is written in the transaction finds the record held
     * by it: the store answers "unknown", and the execution goes on and commits its record.
     */
    @Test
    void aRenewalThatFindsTheRecordHeldByATransactionLeavesTheLeaseAsItWas() {
        Execution execution = begin("k5");
        store.held = true;
        scheduler.advance(POLICY.renewalInterval());
        assertEquals(1, store.heldRenewals, "renewed while held");
        assertTrue(execution.isRunning(), "not lost");
        assertEquals(0, metrics.get(Event.LOST_LEASE));
        store.held = false;
        assertEquals(TransactionalCompletion.JOINED, execution.completeInTransaction(CREATED));
        store.commit();
        execution.transactionEnded(true);
        assertEquals(1, metrics.get(Event.COMPLETED));
    }

    @Test
    void aTransactionThatRollsBackLeavesTheOutcomeUnrecordedAndTheKeyIsReleased() {
        Execution execution = begin("k2");
        assertEquals(TransactionalCompletion.JOINED, execution.completeInTransaction(CREATED));
        store.rollback();
        execution.transactionEnded(false);
        assertTrue(execution.isRunning());
        assertFalse(execution.recordable(201), "the effects are gone: the success must not be recorded");
        execution.release("rolled back");
        assertInstanceOf(Decision.Proceed.class, engine.begin("k2", "k2", FINGERPRINT, POLICY, "POST /x"));
    }

    @Test
    void aLostLeaseIsReportedSoThatTheTransactionRollsBack() {
        Execution execution = begin("k3");
        clock.advance(LOCK_TTL.plusSeconds(1)); // expired without a renewal (a long pause), then taken over
        assertInstanceOf(AcquireResult.Acquired.class, memory.acquire("k3", FINGERPRINT, "other", LOCK_TTL));
        assertEquals(TransactionalCompletion.LOST, execution.completeInTransaction(CREATED));
        assertEquals(1, metrics.get(Event.LOST_LEASE));
        assertFalse(execution.isRunning());
    }

    @Test
    void aStoreThatKeepsItsRecordsElsewhereIsNotJoinedAndTheExecutionGoesOnAsUsual() {
        IdempotencyEngine redisLike = IdempotencyEngine.builder(new FlakyStore(memory), scheduler).clock(clock).build();
        Execution execution = ((Decision.Proceed) redisLike.begin("k4", "k4", FINGERPRINT, POLICY, "POST /x")).execution();
        execution.markStarted();
        assertEquals(TransactionalCompletion.NOT_JOINED, execution.completeInTransaction(CREATED));
        assertTrue(execution.isRunning());
        execution.complete(CREATED);
        assertInstanceOf(Decision.Replay.class, redisLike.begin("k4", "k4", FINGERPRINT, POLICY, "POST /x"));
    }

    /** The flush set the id and version after the method returned: the record takes the new rendering. */
    @Test
    void aResponseRenderedAgainAtCommitReplacesTheOneWrittenWhenTheMethodReturned() {
        Execution execution = begin("k6");
        assertEquals(TransactionalCompletion.JOINED, execution.completeInTransaction(CREATED));
        StoredResponse flushed = new StoredResponse(201, CREATED.headers(),
                "{\"id\":1,\"version\":1}".getBytes(StandardCharsets.UTF_8));
        execution.renderedAtCommit(flushed);
        store.commit();
        execution.transactionEnded(true);
        IdempotencyEngine otherInstance = IdempotencyEngine.builder(store, scheduler).clock(clock).build();
        assertEquals(flushed, ((Decision.Replay) otherInstance.begin("k6", "k6", FINGERPRINT, POLICY, "POST /x")).response());
        assertEquals(flushed, ((Decision.Replay) engine.begin("k6", "k6", FINGERPRINT, POLICY, "POST /x")).response(),
                "this instance's replay cache");
    }

    /** The store fails to write the later rendering: the effects commit all the same, with the earlier one. */
    @Test
    void aRenderingAtCommitTheStoreFailsToWriteLeavesTheEarlierOneAndTheTransactionCommits() {
        Execution execution = begin("k8");
        assertEquals(TransactionalCompletion.JOINED, execution.completeInTransaction(CREATED));
        store.replaceFails = true;
        execution.renderedAtCommit(new StoredResponse(201, CREATED.headers(), "{\"id\":8}".getBytes(StandardCharsets.UTF_8)));
        assertEquals(1, metrics.get(Event.NOT_RECORDED), "counted");
        store.commit();
        execution.transactionEnded(true);
        IdempotencyEngine otherInstance = IdempotencyEngine.builder(store, scheduler).clock(clock).build();
        assertEquals(CREATED, ((Decision.Replay) otherInstance.begin("k8", "k8", FINGERPRINT, POLICY, "POST /x")).response());
    }

    /**
     * A record committed with its effects may still take its client's response right after the
     * commit: another instance that replays it meanwhile keeps asking the store until it is older
     * than its lock TTL, and caches it from then on.
     */
    @Test
    void anotherInstanceCachesARecordCommittedWithItsEffectsOnlyOnceItIsOlderThanItsLockTtl() {
        Execution execution = begin("k7");
        assertEquals(TransactionalCompletion.JOINED, execution.completeInTransaction(CREATED));
        store.commit();
        execution.transactionEnded(true);
        IdempotencyEngine otherInstance = IdempotencyEngine.builder(store, scheduler).clock(clock).build();
        int before = store.acquires.get();
        otherInstance.begin("k7", "k7", FINGERPRINT, POLICY, "POST /x");
        otherInstance.begin("k7", "k7", FINGERPRINT, POLICY, "POST /x");
        assertEquals(before + 2, store.acquires.get(), "young: read from the store each time");
        clock.advance(LOCK_TTL);
        otherInstance.begin("k7", "k7", FINGERPRINT, POLICY, "POST /x");
        otherInstance.begin("k7", "k7", FINGERPRINT, POLICY, "POST /x");
        assertEquals(before + 3, store.acquires.get(), "settled: cached");
    }

    private Execution begin(String key) {
        Execution execution = ((Decision.Proceed) engine.begin(key, key, FINGERPRINT, POLICY, "POST /x")).execution();
        execution.markStarted();
        execution.workBegins();
        return execution;
    }

    /** A store whose in-transaction completion takes effect on {@link #commit()} only. */
    private static final class TransactionalStore extends FlakyStore {

        private final IdempotencyStore delegate;
        private Runnable pending;
        private Duration pendingTtl;
        /** The replacement at commit fails as a database gone away would. */
        volatile boolean replaceFails;
        /** A transaction holds every record: renewals cannot look at them. */
        volatile boolean held;
        int heldRenewals;

        TransactionalStore(IdempotencyStore delegate) {
            super(delegate);
            this.delegate = delegate;
        }

        @Override
        public boolean joinsTransactions() {
            return true;
        }

        @Override
        public TransactionalCompletion completeInTransaction(String recordKey, String ownerToken, byte[] response, Duration ttl) {
            if (delegate.renew(recordKey, ownerToken, LOCK_TTL) != Renewal.RENEWED) { // still ours: the CAS the real store does
                return TransactionalCompletion.LOST;
            }
            pending = () -> delegate.complete(recordKey, ownerToken, response, ttl);
            pendingTtl = ttl;
            return TransactionalCompletion.JOINED;
        }

        @Override
        public boolean replaceResponseInTransaction(String recordKey, String ownerToken, byte[] response) {
            if (replaceFails) {
                throw new io.idemkey.spi.StoreUnavailableException("the database went away", null);
            }
            pending = () -> delegate.complete(recordKey, ownerToken, response, pendingTtl);
            return true;
        }

        @Override
        public Renewal[] renew(List<Lease> leases) {
            if (held) {
                heldRenewals++;
                return leases.stream().map(lease -> Renewal.UNKNOWN).toArray(Renewal[]::new);
            }
            return super.renew(leases);
        }

        void commit() {
            pending.run();
        }

        void rollback() {
            pending = null;
        }
    }
}
