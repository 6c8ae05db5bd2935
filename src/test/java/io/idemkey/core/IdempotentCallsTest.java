package io.idemkey.core;

import io.idemkey.IdempotencyException;
import io.idemkey.store.memory.InMemoryIdempotencyStore;
import io.idemkey.testing.FlakyStore;
import io.idemkey.testing.ManualClock;
import io.idemkey.testing.ManualScheduler;
import jakarta.json.bind.Jsonb;
import jakarta.json.bind.JsonbBuilder;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Type;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Idempotent calls on the engine, with a manual clock and the in-memory store. */
class IdempotentCallsTest {

    private static final Duration LOCK_TTL = Duration.ofSeconds(30);
    private static final Type RECEIPTS = new ArrayList<Receipt>() { }.getClass().getGenericSuperclass();

    public record Receipt(String payment, long cents) {
    }

    /** A business outcome, checked, as declines often are. */
    public static class Declined extends Exception {
        public Declined(String message) {
            super(message);
        }
    }

    private final ManualClock clock = new ManualClock();
    private final ManualScheduler scheduler = new ManualScheduler(clock);
    private final FlakyStore store = new FlakyStore(new InMemoryIdempotencyStore(clock));
    private final IdempotencyMetrics metrics = new IdempotencyMetrics();
    private final IdempotencyEngine engine = IdempotencyEngine.builder(store, scheduler).clock(clock).metrics(metrics)
            .sleeper(scheduler::advance).build();
    private final Jsonb jsonb = JsonbBuilder.create();
    private final IdempotentCalls calls = new IdempotentCalls(engine, new Fingerprint(), jsonb, "idempotency:", 64);
    private final AtomicInteger runs = new AtomicInteger();

    private static CallPolicy policy(String scope, boolean failOpen, Duration wait, List<Class<? extends Exception>> recorded,
                                     Set<String> excluded) {
        return new CallPolicy(scope, new IdempotencyPolicy(Duration.ofHours(24), LOCK_TTL, true, excluded, failOpen, wait), recorded);
    }

    private static final CallPolicy PAYMENTS = policy("payments", false, Duration.ZERO, List.of(Declined.class), Set.of("nonce"));

    private <T, E extends Exception> T call(CallPolicy policy, String key, Type type, List<?> arguments,
                                            io.idemkey.Idempotency.Work<T, E> work) throws E {
        return calls.call(policy, key, type, arguments, IdempotentCalls.StoreCalls.DIRECT, work);
    }

    private List<Receipt> charge(String payment) {
        runs.incrementAndGet();
        return List.of(new Receipt(payment, 100 * runs.get()));
    }

    @Test
    void duplicateGetsAnEqualValueOfTheGenericTypeWithoutRunning() {
        List<Receipt> first = call(PAYMENTS, "k1", RECEIPTS, List.of("p1"), () -> charge("p1"));
        List<Receipt> duplicate = call(PAYMENTS, "k1", RECEIPTS, List.of("p1"), () -> charge("p1"));

        assertEquals(1, runs.get());
        assertEquals(first, duplicate);
        assertInstanceOf(Receipt.class, duplicate.get(0), "read back as List<Receipt>, not as maps");
        assertEquals(1, metrics.get(IdempotencyMetrics.Event.REPLAYED));
    }

    @Test
    void aPrimitiveOrPlainResultComesBackAsItsType() {
        int first = call(PAYMENTS, "k1", int.class, List.of(), () -> runs.incrementAndGet() + 41);
        int duplicate = call(PAYMENTS, "k1", int.class, List.of(), () -> runs.incrementAndGet() + 41);
        Receipt receipt = call(PAYMENTS, "k2", Receipt.class, List.of(), () -> new Receipt("p2", runs.incrementAndGet()));
        Receipt again = call(PAYMENTS, "k2", Receipt.class, List.of(), () -> new Receipt("p2", runs.incrementAndGet()));

        assertEquals(42, first);
        assertEquals(42, duplicate);
        assertEquals(receipt, again);
        assertEquals(2, runs.get());
    }

    @Test
    void voidWorkRunsOnceAndDuplicatesReturnNothing() {
        Object first = call(PAYMENTS, "k1", void.class, List.of(), () -> { runs.incrementAndGet(); return null; });
        Object duplicate = call(PAYMENTS, "k1", void.class, List.of(), () -> { runs.incrementAndGet(); return null; });

        assertNull(first);
        assertNull(duplicate);
        assertEquals(1, runs.get());
    }

    @Test
    void duplicateWhileTheFirstRunsThrowsInProgressWithRetryAfter() {
        IdempotencyException.InProgress inProgress = call(PAYMENTS, "k1", RECEIPTS, List.of("p1"),
                () -> assertThrows(IdempotencyException.InProgress.class,
                        () -> call(PAYMENTS, "k1", RECEIPTS, List.of("p1"), () -> charge("p1"))));

        assertEquals(0, runs.get(), "the duplicate did not run");
        assertEquals("k1", inProgress.key());
        assertTrue(inProgress.retryAfter().compareTo(Duration.ofSeconds(1)) >= 0);
    }

    @Test
    void duplicateWithAnInFlightWaitGetsTheFirstOutcomeOnceItIsRecorded() {
        CallPolicy waiting = policy("payments", false, Duration.ofSeconds(10), List.of(), Set.of());
        Execution first = ((Decision.Proceed) engine.begin(RecordKey.ofCall("idempotency:", "payments", "k1"), "k1",
                fingerprintOf(waiting, List.of("p1")), waiting.policy(), "payments")).execution();
        first.markStarted();
        scheduler.once(Duration.ofSeconds(2), () -> first.complete(CallOutcome.returned(jsonb, List.of(new Receipt("p1", 7)), RECEIPTS)));

        List<Receipt> duplicate = call(waiting, "k1", RECEIPTS, List.of("p1"), () -> charge("p1"));

        assertEquals(List.of(new Receipt("p1", 7)), duplicate);
        assertEquals(0, runs.get());
    }

    @Test
    void anExceptionReleasesTheKeyAndTheNextCallRuns() {
        assertThrows(IllegalStateException.class, () -> call(PAYMENTS, "k1", RECEIPTS, List.of("p1"), () -> {
            runs.incrementAndGet();
            throw new IllegalStateException("gateway timeout");
        }));
        List<Receipt> retry = call(PAYMENTS, "k1", RECEIPTS, List.of("p1"), () -> charge("p1"));

        assertEquals(2, runs.get());
        assertEquals(List.of(new Receipt("p1", 200)), retry);
    }

    @Test
    void aRecordedExceptionIsThrownAgainWithTheSameClassAndMessageWithoutRunning() {
        Declined first = assertThrows(Declined.class, () -> call(PAYMENTS, "k1", RECEIPTS, List.of("p1"), () -> {
            runs.incrementAndGet();
            throw new Declined("card declined: insufficient funds");
        }));
        Declined again = assertThrows(Declined.class, () -> call(PAYMENTS, "k1", RECEIPTS, List.of("p1"), () -> charge("p1")));

        assertEquals(1, runs.get());
        assertEquals(first.getMessage(), again.getMessage());
        assertNotEquals(first, again, "a new exception of the recorded class");
    }

    @Test
    void aRecordedExceptionOfAClassNoLongerRecordedComesBackAsRecordedFailureNeverInstantiated() throws Declined {
        assertThrows(Declined.class, () -> call(PAYMENTS, "k1", RECEIPTS, List.of("p1"), () -> {
            throw new Declined("declined");
        }));
        CallPolicy notRecording = policy("payments", false, Duration.ZERO, List.of(), Set.of("nonce"));

        IdempotencyException.RecordedFailure failure = assertThrows(IdempotencyException.RecordedFailure.class,
                () -> call(notRecording, "k1", RECEIPTS, List.of("p1"), () -> charge("p1")));
        assertEquals(Declined.class.getName(), failure.exceptionClass());
        assertTrue(failure.getMessage().endsWith(": declined"), failure.getMessage());
        assertEquals(0, runs.get());
    }

    @Test
    void theKeyReusedWithOtherArgumentsThrowsKeyReusedButExcludedFieldsMayChange() {
        call(PAYMENTS, "k1", RECEIPTS, List.of(new Payment("p1", 100, "n1")), () -> charge("p1"));

        List<Receipt> sameButNonce = call(PAYMENTS, "k1", RECEIPTS, List.of(new Payment("p1", 100, "n2")), () -> charge("p1"));
        IdempotencyException.KeyReused reused = assertThrows(IdempotencyException.KeyReused.class,
                () -> call(PAYMENTS, "k1", RECEIPTS, List.of(new Payment("p1", 999, "n1")), () -> charge("p1")));

        assertEquals(1, runs.get());
        assertEquals(List.of(new Receipt("p1", 100)), sameButNonce);
        assertEquals("k1", reused.key());
    }

    public record Payment(String id, long cents, String nonce) {
    }

    @Test
    void scopesKeepSeparateRecordsAndCallsNeverShareRecordsWithHttpRequests() {
        call(PAYMENTS, "k1", RECEIPTS, List.of(), () -> charge("p1"));
        call(policy("refunds", false, Duration.ZERO, List.of(), Set.of()), "k1", RECEIPTS, List.of(), () -> charge("p1"));

        assertEquals(2, runs.get());
        assertNotEquals(RecordKey.of("idempotency:", "call", "payments:k1"), RecordKey.ofCall("idempotency:", "payments", "k1"));
        assertNotEquals(RecordKey.of("idempotency:", "call:payments", "k1"), RecordKey.ofCall("idempotency:", "payments", "k1"));
    }

    @Test
    void theLeaseIsRenewedWhileTheWorkRunsLongerThanTheLockTtl() {
        call(PAYMENTS, "k1", RECEIPTS, List.of(), () -> {
            scheduler.advance(LOCK_TTL.multipliedBy(4)); // renewed every 10 s meanwhile
            assertThrows(IdempotencyException.InProgress.class, () -> call(PAYMENTS, "k1", RECEIPTS, List.of(), () -> charge("p1")));
            return charge("p1");
        });
        assertEquals(1, runs.get());
        assertTrue(store.renewals.get() >= 10, "renewals: " + store.renewals.get());
    }

    @Test
    void aCrashedOwnersKeyRunsAgainOnceItsLeaseIsOverAndItsLateCompletionIsRefused() {
        Execution crashed = ((Decision.Proceed) engine.begin(RecordKey.ofCall("idempotency:", "payments", "k1"), "k1",
                fingerprintOf(PAYMENTS, List.of()), PAYMENTS.policy(), "payments")).execution();
        crashed.markStarted();
        crashed.workBegins(); // ... and its server dies: nobody renews any more
        engine.dropLease(crashed);

        scheduler.advance(LOCK_TTL.minusSeconds(1));
        assertThrows(IdempotencyException.InProgress.class, () -> call(PAYMENTS, "k1", RECEIPTS, List.of(), () -> charge("p1")));
        scheduler.advance(Duration.ofSeconds(2));
        List<Receipt> taken = call(PAYMENTS, "k1", RECEIPTS, List.of(), () -> charge("p1"));
        crashed.complete(CallOutcome.returned(jsonb, List.of(new Receipt("zombie", 0)), RECEIPTS)); // a paused owner wakes up

        assertEquals(List.of(new Receipt("p1", 100)), taken);
        assertEquals(taken, call(PAYMENTS, "k1", RECEIPTS, List.of(), () -> charge("p1")), "fenced: the new owner's outcome stays");
        assertEquals(1, metrics.get(IdempotencyMetrics.Event.LOST_LEASE));
    }

    @Test
    void anUnreachableStoreThrowsUnavailableWhenFailingClosedAndRunsUnprotectedWhenFailingOpen() {
        store.down();
        IdempotencyException.Unavailable unavailable = assertThrows(IdempotencyException.Unavailable.class,
                () -> call(PAYMENTS, "k1", RECEIPTS, List.of(), () -> charge("p1")));
        assertEquals(0, runs.get());
        assertEquals(Duration.ofSeconds(1), unavailable.retryAfter());

        List<Receipt> unprotected = call(policy("payments", true, Duration.ZERO, List.of(), Set.of()), "k1", RECEIPTS, List.of(),
                () -> charge("p1"));
        assertEquals(1, runs.get());
        assertEquals(List.of(new Receipt("p1", 100)), unprotected);
    }

    @Test
    void invalidKeysAreRefusedBeforeTheStoreIsAsked() {
        for (String key : new String[]{null, "", "x".repeat(65), "line\nbreak"}) {
            assertThrows(IdempotencyException.InvalidKey.class, () -> call(PAYMENTS, key, RECEIPTS, List.of(), () -> charge("p1")),
                    String.valueOf(key));
        }
        assertEquals(0, store.acquires.get());
        assertEquals("k-\u00e9\u4e2d", call(PAYMENTS, "k-\u00e9\u4e2d", String.class, List.of(), () -> "k-\u00e9\u4e2d"),
                "any other text is a key");
    }

    @Test
    void aResultThatCannotBeWrittenAsJsonIsReturnedButNotRecorded() {
        Object first = call(PAYMENTS, "k1", Object.class, List.of(), () -> {
            runs.incrementAndGet();
            return new Unwritable();
        });
        call(PAYMENTS, "k1", Object.class, List.of(), () -> runs.incrementAndGet());

        assertInstanceOf(Unwritable.class, first);
        assertEquals(2, runs.get(), "not recorded, so released: a later call runs");
        assertEquals(1, metrics.get(IdempotencyMetrics.Event.NOT_RECORDED));
    }

    /** JSON-B fails on it: a getter that throws. */
    public static class Unwritable {
        public String getValue() {
            throw new IllegalStateException("not serialisable");
        }
    }

    @Test
    void anErrorReleasesTheKeyToo() {
        assertThrows(StackOverflowError.class, () -> call(PAYMENTS, "k1", RECEIPTS, List.of(), () -> {
            throw new StackOverflowError();
        }));
        call(PAYMENTS, "k1", RECEIPTS, List.of(), () -> charge("p1"));
        assertEquals(1, runs.get());
        assertFalse(store.releases.get() == 0);
    }

    private byte[] fingerprintOf(CallPolicy policy, List<?> arguments) {
        return new Fingerprint().of("CALL", policy.scope(), List.of(), true,
                jsonb.toJson(arguments).getBytes(java.nio.charset.StandardCharsets.UTF_8), policy.policy().excludeFields());
    }
}
