package io.idemkey.cdi;

import io.idemkey.IdempotencyException;
import io.idemkey.core.CallPolicy;
import io.idemkey.core.Execution;
import io.idemkey.core.Fingerprint;
import io.idemkey.core.IdempotencyEngine;
import io.idemkey.core.IdempotencyMetrics;
import io.idemkey.core.IdempotencyPolicy;
import io.idemkey.core.IdempotentCalls;
import io.idemkey.spi.TransactionalCompletion;
import io.idemkey.store.jdbc.NoConnectionException;
import io.idemkey.store.memory.InMemoryIdempotencyStore;
import io.idemkey.testing.FlakyStore;
import io.idemkey.testing.LogCapture;
import io.idemkey.testing.ManualClock;
import io.idemkey.testing.ManualScheduler;
import jakarta.json.bind.JsonbBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.LogRecord;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A call's outcome and its JTA transaction, on the Redis-like path (a store that does not join
 * transactions): recorded only once the transaction commits, released when it rolls back, the lease
 * held until it ends. The transaction is a stand-in for the server's; the store is the in-memory one.
 */
class TransactionalStoreCallsTest {

    private static final Duration LOCK_TTL = Duration.ofSeconds(30);
    private static final CallPolicy POLICY = new CallPolicy("transfers",
            new IdempotencyPolicy(Duration.ofHours(1), LOCK_TTL, true, Set.of(), false, Duration.ZERO), List.of());

    /** One transaction at a time on the test thread: begun, then ended by the test. */
    private static final class FakeTransaction implements Transactions {
        boolean present;
        boolean rollbackOnly;
        final List<Consumer<Boolean>> synchronizations = new ArrayList<>();
        final List<Runnable> beforeCompletions = new ArrayList<>();

        void begin() {
            present = true;
            rollbackOnly = false;
        }

        void end(boolean commit) {
            if (commit && !rollbackOnly) {
                for (Runnable work : beforeCompletions) {
                    try {
                        work.run();
                    } catch (RuntimeException e) {
                        rollbackOnly = true;
                    }
                }
            }
            beforeCompletions.clear();
            present = false;
            synchronizations.forEach(s -> s.accept(commit && !rollbackOnly));
            synchronizations.clear();
        }

        @Override
        public boolean present() {
            return present;
        }

        @Override
        public boolean active() {
            return present && !rollbackOnly;
        }

        @Override
        public void setRollbackOnly() {
            rollbackOnly = true;
        }

        @Override
        public void afterCompletion(Consumer<Boolean> ended) {
            synchronizations.add(ended);
        }

        @Override
        public void beforeCompletion(Runnable work) {
            beforeCompletions.add(work);
        }

        @Override
        public <T> T outside(Supplier<T> storeCall) {
            return storeCall.get();
        }
    }

    private final ManualClock clock = new ManualClock();
    private final ManualScheduler scheduler = new ManualScheduler(clock);
    private final FlakyStore store = new FlakyStore(new InMemoryIdempotencyStore(clock));
    private final IdempotentCalls calls = new IdempotentCalls(IdempotencyEngine.builder(store, scheduler).clock(clock).build(),
            new Fingerprint(), JsonbBuilder.create(), "idempotency:", 255);
    private final FakeTransaction transaction = new FakeTransaction();
    private final TransactionalStoreCalls storeCalls = new TransactionalStoreCalls(transaction, store,
            new CompletionWithEffects(transaction, store), scheduler, Duration.ofSeconds(1));
    private final AtomicInteger runs = new AtomicInteger();

    private String transfer(String key) {
        return calls.call(POLICY, key, String.class, List.of(), storeCalls, () -> "transfer #" + runs.incrementAndGet());
    }

    @Test
    void theOutcomeIsRecordedOnlyOnceTheTransactionCommits() {
        transaction.begin();
        assertEquals("transfer #1", transfer("k1"));
        assertEquals(0, store.completes.get(), "not before the commit");
        transaction.end(true);
        assertEquals(1, store.completes.get());
        assertEquals("transfer #1", transfer("k1"));
        assertEquals(1, runs.get());
    }

    /** A JPA entity gets its generated id and version as the transaction flushes, after the call returned. */
    public static final class Entity {
        public Long id;
        public String name;
    }

    @Test
    void theRecordedOutcomeIsTheResultAsItIsWhenTheTransactionCommits() {
        Entity entity = new Entity();
        entity.name = "transfer";
        transaction.begin();
        Entity returned = calls.call(POLICY, "k1", Entity.class, List.of(), storeCalls, () -> entity);
        returned.id = 42L; // the flush
        transaction.end(true);
        Entity replayed = calls.call(POLICY, "k1", Entity.class, List.of(), storeCalls, Entity::new);
        assertEquals(42L, replayed.id);
        assertEquals("transfer", replayed.name);
    }

    @Test
    void aRolledBackCallReleasesItsKeyAndRunsAgain() {
        transaction.begin();
        transfer("k1");
        transaction.end(false);
        assertEquals("transfer #2", transfer("k1"));

        transaction.begin();
        transaction.setRollbackOnly(); // marked before the method returned: released at once
        transfer("k2");
        assertEquals(2, store.releases.get(), "k1 after its rollback, k2 at once");
        transaction.end(true);
        assertEquals("transfer #4", transfer("k2"));
        assertEquals(2, store.completes.get(), "only the two calls outside a transaction were recorded");
    }

    @Test
    void aFailedCallWhoseTransactionCommitsAnywayIsReleasedAndSaidLoudly() {
        List<String> warnings = new ArrayList<>();
        java.util.logging.Logger log = java.util.logging.Logger.getLogger(TransactionalStoreCalls.class.getName());
        java.util.logging.Handler capture = new java.util.logging.Handler() {
            @Override
            public void publish(java.util.logging.LogRecord record) {
                warnings.add(record.getMessage());
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        log.addHandler(capture);
        try {
            transaction.begin();
            org.junit.jupiter.api.Assertions.assertThrows(java.io.IOException.class, () -> calls.call(POLICY, "k1", String.class,
                    List.of(), storeCalls, () -> {
                        throw new java.io.IOException("checked: no rollback by default");
                    }));
            assertEquals(1, store.releases.get(), "released at once");
            assertTrue(warnings.isEmpty());
            transaction.end(true);
            assertEquals(1, warnings.size());
            assertTrue(warnings.get(0).contains("failed (the call failed with java.io.IOException) but its transaction committed"),
                    warnings.get(0));
        } finally {
            log.removeHandler(capture);
        }
    }

    @Test
    void theLeaseIsRenewedUntilTheTransactionEndsHoweverLongTheCallerRunsOn() {
        transaction.begin();
        transfer("k1");
        scheduler.advance(LOCK_TTL.multipliedBy(3)); // the caller's transaction goes on after the method returned
        assertTrue(store.renewals.get() >= 8, "renewals: " + store.renewals.get());
        transaction.end(true);
        assertEquals(1, store.completes.get(), "still the owner: the completion lands");
        assertEquals("transfer #1", transfer("k1"));
    }

    /**
     * A store that joins transactions (as the JDBC store does) but whose in-transaction completion
     * fails: the transaction must not commit the effects without their record.
     */
    private final class JoiningStore extends FlakyStore {
        RuntimeException failure;

        JoiningStore() {
            super(new InMemoryIdempotencyStore(clock));
        }

        @Override
        public boolean joinsTransactions() {
            return true;
        }

        @Override
        public TransactionalCompletion completeInTransaction(String recordKey, String ownerToken, byte[] response, Duration ttl) {
            throw failure;
        }
    }

    private String transferOn(JoiningStore joining, String key) {
        IdempotentCalls onJoining = new IdempotentCalls(IdempotencyEngine.builder(joining, scheduler).clock(clock).build(),
                new Fingerprint(), JsonbBuilder.create(), "idempotency:", 255);
        TransactionalStoreCalls joiningCalls = new TransactionalStoreCalls(transaction, joining,
                new CompletionWithEffects(transaction, joining), scheduler, Duration.ofSeconds(1));
        return onJoining.call(POLICY, key, String.class, List.of(), joiningCalls, () -> "transfer #" + runs.incrementAndGet());
    }

    /** A statement that failed in the transaction (an error of any class): rolled back, the key free again. */
    @Test
    void anOutcomeThatCouldNotBeWrittenInTheTransactionRollsItBackAndReleasesTheKey() {
        JoiningStore joining = new JoiningStore();
        joining.failure = new IllegalStateException("ERROR: current transaction is aborted (25P02)");
        transaction.begin();
        assertThrows(IdempotencyException.Unavailable.class, () -> transferOn(joining, "k1"));
        assertTrue(transaction.rollbackOnly, "the effects must not commit without their record");
        transaction.end(true);
        scheduler.runDue();
        joining.failure = null;
        assertEquals(1, joining.releases.get(), "released once the transaction rolled back");
        assertEquals("transfer #2", transferOn(joining, "k1"), "the key is free: the next call runs");
    }

    /**
     * The container refused the store a connection in this transaction (a second non-XA resource),
     * while the store answers outside it: the transaction commits, and the outcome is recorded after.
     */
    @Test
    void aConnectionRefusedInTheTransactionWhileTheStoreAnswersRecordsTheOutcomeAfterTheCommit() {
        JoiningStore joining = new JoiningStore();
        joining.failure = new NoConnectionException("no connection (Local transaction already has 1 non-XA Resource)", null);
        transaction.begin();
        assertEquals("transfer #1", transferOn(joining, "k1"));
        assertFalse(transaction.rollbackOnly);
        transaction.end(true);
        scheduler.runDue();
        assertEquals(1, joining.completes.get(), "recorded after the commit");
        assertEquals("transfer #1", transferOn(joining, "k1"), "replayed");
    }

    @RegisterExtension
    final LogCapture executionLog = new LogCapture(Execution.class.getName());

    /**
     * The application stops while a call's transaction commits: its completion after the commit
     * cannot be handed to the stopped scheduler. The record stays in progress until its lease ends,
     * which is logged with the key and the endpoint, and counted.
     */
    @Test
    void aCompletionAfterTheCommitThatTheStoppingApplicationCannotSendIsLoggedAndCounted() {
        JoiningStore joining = new JoiningStore();
        joining.failure = new NoConnectionException("no connection (Local transaction already has 1 non-XA Resource)", null);
        IdempotencyEngine engine = IdempotencyEngine.builder(joining, scheduler).clock(clock).build();
        IdempotentCalls onJoining = new IdempotentCalls(engine, new Fingerprint(), JsonbBuilder.create(), "idempotency:", 255);
        ManualScheduler afterwards = new ManualScheduler(clock);
        TransactionalStoreCalls joiningCalls = new TransactionalStoreCalls(transaction, joining,
                new CompletionWithEffects(transaction, joining), afterwards, Duration.ofSeconds(1));
        transaction.begin();
        assertEquals("transfer #1", onJoining.call(POLICY, "k1", String.class, List.of(), joiningCalls,
                () -> "transfer #" + runs.incrementAndGet()));
        afterwards.stop();
        transaction.end(true);
        afterwards.runDue();
        assertEquals(0, joining.completes.get());
        assertEquals(1, engine.metrics().get(IdempotencyMetrics.Event.DROPPED_AT_SHUTDOWN));
        List<LogRecord> dropped = executionLog.records().stream()
                .filter(r -> r.getMessage().startsWith("idempotency decision=dropped-at-shutdown ")).toList();
        assertEquals(1, dropped.size(), executionLog.messages().toString());
        assertEquals(Level.WARNING, dropped.get(0).getLevel());
        assertTrue(dropped.get(0).getMessage().contains("endpoint=\"transfers\" key=\"k1\" operation=complete"),
                dropped.get(0).getMessage());
    }
}
