package io.idemkey.core;

import io.idemkey.core.IdempotencyMetrics.Event;
import io.idemkey.spi.AcquireResult;
import io.idemkey.spi.IdempotencyStore;
import io.idemkey.spi.Lease;
import io.idemkey.spi.RateLimit;
import io.idemkey.spi.Renewal;
import io.idemkey.spi.StoreAccessDeniedException;
import io.idemkey.spi.StoreUnavailableException;
import io.idemkey.store.memory.InMemoryIdempotencyStore;
import io.idemkey.testing.FlakyStore;
import io.idemkey.testing.ManualClock;
import io.idemkey.testing.ManualScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

class IdempotencyEngineTest {

    private static final Duration LOCK_TTL = Duration.ofSeconds(30);
    private static final IdempotencyPolicy POLICY =
            new IdempotencyPolicy(Duration.ofHours(24), LOCK_TTL, true, Set.of(), false, Duration.ZERO);
    private static final String KEY = "8e03978e-40d5-43e8-bc93-6894a57f9324";
    private static final String RECORD_KEY = RecordKey.of("idempotency:", "alice", KEY);
    private static final String ENDPOINT = "POST /orders";
    private static final byte[] FINGERPRINT = new Fingerprint().of("POST", "/orders", List.of(), true,
            "{\"amount\":10}".getBytes(StandardCharsets.UTF_8), Set.of());
    private static final byte[] OTHER_FINGERPRINT = new Fingerprint().of("POST", "/orders", List.of(), true,
            "{\"amount\":11}".getBytes(StandardCharsets.UTF_8), Set.of());
    private static final StoredResponse CREATED = new StoredResponse(201, List.of(
            new StoredResponse.Header("Content-Type", "application/json"),
            new StoredResponse.Header("Location", "/orders/42"),
            new StoredResponse.Header("Link", "<a>; rel=self"),
            new StoredResponse.Header("Link", "<b>; rel=up")),
            "{\"id\":42}".getBytes(StandardCharsets.UTF_8));

    /** Held strongly: the JDK keeps loggers weakly, and a collected logger would lose its handler. */
    private static final Logger CORE_LOG = Logger.getLogger("io.idemkey.core");

    private final ManualClock clock = new ManualClock();
    private final ManualScheduler scheduler = new ManualScheduler(clock);
    private final InMemoryIdempotencyStore memory = new InMemoryIdempotencyStore(clock);
    private final FlakyStore store = new FlakyStore(memory);
    private final IdempotencyMetrics metrics = new IdempotencyMetrics();
    private final List<Duration> sleeps = new ArrayList<>();
    /** Runs after each pause of a waiting retry: what "meanwhile" happens on other threads. */
    private Runnable meanwhile = () -> { };
    private final IdempotencyEngine engine = engineBuilder(store, scheduler, metrics).build();

    private final List<LogRecord> logged = new CopyOnWriteArrayList<>();
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord record) {
            logged.add(record);
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    @BeforeEach
    void captureLogs() {
        CORE_LOG.addHandler(capture);
        CORE_LOG.setUseParentHandlers(false);
    }

    @AfterEach
    void restoreLogs() {
        CORE_LOG.removeHandler(capture);
        CORE_LOG.setUseParentHandlers(true);
    }

    private void assertWarned(String decision) {
        assertTrue(logged.stream().anyMatch(r -> r.getLevel() == Level.WARNING
                        && r.getMessage().startsWith("idempotency decision=" + decision + " ")),
                () -> "no warning for " + decision + " in " + logged.stream().map(LogRecord::getMessage).toList());
    }

    private IdempotencyEngine.Builder engineBuilder(IdempotencyStore store, ManualScheduler scheduler,
                                                    IdempotencyMetrics metrics) {
        return IdempotencyEngine.builder(store, scheduler)
                .clock(clock)
                .metrics(metrics)
                .sleeper(duration -> {
                    sleeps.add(duration);
                    scheduler.advance(duration);
                    meanwhile.run();
                });
    }

    private Decision begin() {
        return begin(engine, FINGERPRINT, POLICY);
    }

    private Decision begin(IdempotencyEngine engine, byte[] fingerprint, IdempotencyPolicy policy) {
        return engine.begin(RECORD_KEY, KEY, fingerprint, policy, ENDPOINT);
    }

    private Execution proceed(IdempotencyEngine engine) {
        Execution execution = assertInstanceOf(Decision.Proceed.class, begin(engine, FINGERPRINT, POLICY)).execution();
        execution.markStarted();
        execution.workBegins(); // the method runs until the test says otherwise
        return execution;
    }

    private Execution proceed() {
        return proceed(engine);
    }

    private static StoredResponse response(String body) {
        return new StoredResponse(200, List.of(new StoredResponse.Header("Content-Type", "text/plain")),
                body.getBytes(StandardCharsets.UTF_8));
    }

    private StoredResponse replayed() {
        return assertInstanceOf(Decision.Replay.class, begin()).response();
    }

    private static IdempotencyPolicy policy(boolean failOpen, Duration inFlightWait) {
        return new IdempotencyPolicy(Duration.ofHours(24), LOCK_TTL, true, Set.of(), failOpen, inFlightWait);
    }

    @Test
    void firstRequestProceeds() {
        Decision decision = begin();
        Execution execution = assertInstanceOf(Decision.Proceed.class, decision).execution();
        assertTrue(execution.isRunning());
        assertEquals(KEY, execution.key());
        assertEquals(ENDPOINT, execution.endpoint());
        assertEquals(1, metrics.get(Event.ACQUIRED));
        assertEquals(1, store.acquires.get(), "one store round trip");
    }

    @Test
    void retryAfterCompletionIsReplayedWithIdenticalStatusHeadersAndBody() {
        Execution execution = proceed();
        execution.complete(CREATED);
        assertFalse(execution.isRunning());
        assertEquals(1, metrics.get(Event.COMPLETED));

        StoredResponse replay = replayed();
        assertEquals(CREATED.status(), replay.status());
        assertEquals(CREATED.headers(), replay.headers());
        assertArrayEquals(CREATED.body(), replay.body());
        assertEquals(1, metrics.get(Event.REPLAYED));
        assertEquals(1, store.acquires.get(), "replayed from this instance's cache: no round trip");
        assertEquals(1, store.completes.get(), "a replay writes nothing");
    }

    @Test
    void replayOfARecordCompletedElsewhereCostsOneRoundTripThenNone() {
        IdempotencyEngine elsewhere = engineBuilder(store, scheduler, new IdempotencyMetrics()).build();
        proceed(elsewhere).complete(CREATED);
        int before = store.acquires.get();
        assertEquals(CREATED, replayed());
        assertEquals(before + 1, store.acquires.get(), "the first replay here asks the store");
        assertEquals(CREATED, replayed());
        assertEquals(before + 1, store.acquires.get(), "the next ones come from the cache");
        assertInstanceOf(Decision.Mismatch.class, begin(engine, OTHER_FINGERPRINT, POLICY));
        assertEquals(before + 1, store.acquires.get(), "so does a mismatch: a completed record never changes");
    }

    @Test
    void cachedReplayNeverOutlivesItsRecord() {
        proceed().complete(CREATED);
        scheduler.advance(Duration.ofHours(24));
        assertInstanceOf(Decision.Proceed.class, begin(), "the record and its cached copy expired together");
    }

    @Test
    void cachedReplaysAreKeptPerScope() {
        proceed().complete(CREATED);
        String bobs = RecordKey.of("idempotency:", "bob", KEY);
        assertInstanceOf(Decision.Proceed.class, engine.begin(bobs, KEY, FINGERPRINT, POLICY, ENDPOINT),
                "bob's key is his own, cache or not");
    }

    @Test
    void withoutACacheEveryReplayAsksTheStore() {
        IdempotencyEngine uncached = engineBuilder(store, scheduler, metrics).replayCacheBytes(0).build();
        proceed(uncached).complete(CREATED);
        int before = store.acquires.get();
        begin(uncached, FINGERPRINT, POLICY);
        begin(uncached, FINGERPRINT, POLICY);
        assertEquals(before + 2, store.acquires.get());
    }

    @Test
    void retryAfterReleaseRunsAgain() {
        proceed().release("the method answered 503");
        assertEquals(1, metrics.get(Event.RELEASED));
        assertInstanceOf(Decision.Proceed.class, begin());
    }

    @Test
    void sameKeyWithAnotherRequestIsMismatchWhileRunningAndAfterCompletion() {
        Execution execution = proceed();
        assertInstanceOf(Decision.Mismatch.class, begin(engine, OTHER_FINGERPRINT, POLICY));
        execution.complete(CREATED);
        assertInstanceOf(Decision.Mismatch.class, begin(engine, OTHER_FINGERPRINT, POLICY));
        assertEquals(2, metrics.get(Event.MISMATCH));
        assertEquals(0, metrics.get(Event.CONFLICT));
    }

    @Test
    void retryWhileTheFirstRunsIsConflictWithRetryAfterCappedAtTheConfiguredMaximum() {
        proceed();
        Decision.Conflict conflict = assertInstanceOf(Decision.Conflict.class, begin());
        assertEquals(Duration.ofSeconds(5), conflict.retryAfter(), "30 s left on the lease, capped at the default 5 s");
        assertEquals(1, metrics.get(Event.CONFLICT));
    }

    @Test
    void conflictRetryAfterIsAboutTheLeaseLeftInWholeSecondsAndAtLeastOne() {
        IdempotencyEngine generous = engineBuilder(store, scheduler, metrics).conflictRetryAfterMax(Duration.ofSeconds(60)).build();
        IdempotencyEngine crashed = engineBuilder(store, new ManualScheduler(clock), new IdempotencyMetrics()).build();
        proceed(crashed); // its renewals never run
        assertEquals(Duration.ofSeconds(30), assertInstanceOf(Decision.Conflict.class, begin(generous, FINGERPRINT, POLICY)).retryAfter());
        clock.advance(Duration.ofMillis(1_500));
        assertEquals(Duration.ofSeconds(29), assertInstanceOf(Decision.Conflict.class, begin(generous, FINGERPRINT, POLICY)).retryAfter());
        clock.advance(Duration.ofMillis(28_300));
        assertEquals(Duration.ofSeconds(1), assertInstanceOf(Decision.Conflict.class, begin(generous, FINGERPRINT, POLICY)).retryAfter(),
                "0.2 s left still says 1 s");
        for (int i = 0; i < 3; i++) {
            Duration retryAfter = assertInstanceOf(Decision.Conflict.class, begin()).retryAfter();
            assertEquals(0, retryAfter.getNano());
            assertTrue(retryAfter.getSeconds() >= 1 && retryAfter.getSeconds() <= 5, retryAfter.toString());
        }
    }

    @Test
    void aMethodSlowerThanLockTtlIsNeverRunTwiceBecauseItsLeaseIsRenewed() {
        Execution execution = proceed();
        Instant start = clock.instant();
        for (int seconds : new int[]{25, 50, 100, 1_000}) {
            scheduler.advance(Duration.between(clock.instant(), start.plusSeconds(seconds)));
            Decision decision = begin();
            assertInstanceOf(Decision.Conflict.class, decision, "after " + seconds + " s: " + decision);
            assertTrue(execution.isRunning());
        }
        assertEquals(100, store.renewals.get(), "renewed every lockTtl/3 = 10 s for 1000 s");
        assertEquals(0, metrics.get(Event.LOST_LEASE));
        execution.complete(CREATED);
        assertEquals(CREATED, replayed());
        assertEquals(1, metrics.get(Event.ACQUIRED));
    }

    @Test
    void rateLimitRefusesABusyKeyWith429CountingStoreRequestsAndCachedReplaysAndForgetsWithTheWindow() {
        IdempotencyEngine limited = engineBuilder(store, scheduler, metrics)
                .rateLimit(new RateLimit(3, Duration.ofSeconds(60))).build();
        Execution first = assertInstanceOf(Decision.Proceed.class, begin(limited, FINGERPRINT, POLICY)).execution();
        first.markStarted();
        assertInstanceOf(Decision.Conflict.class, begin(limited, FINGERPRINT, POLICY));
        assertInstanceOf(Decision.Mismatch.class, begin(limited, OTHER_FINGERPRINT, POLICY));
        int acquires = store.acquires.get();
        Decision.RateLimited refused = assertInstanceOf(Decision.RateLimited.class, begin(limited, FINGERPRINT, POLICY));
        assertEquals(Duration.ofSeconds(60), refused.retryAfter(), "the window's time left, whole seconds");
        assertEquals(acquires + 1, store.acquires.get(), "counted in the acquire round trip, nothing more");
        assertEquals(1, metrics.get(Event.RATE_LIMITED));

        first.complete(CREATED);
        acquires = store.acquires.get();
        assertInstanceOf(Decision.RateLimited.class, begin(limited, FINGERPRINT, POLICY),
                "a replay from this instance's cache is judged by what this instance counted: 5 > 3");
        assertEquals(acquires, store.acquires.get(), "cached replays never reach the store");

        clock.advance(Duration.ofSeconds(60));
        for (int i = 0; i < 3; i++) {
            assertInstanceOf(Decision.Replay.class, begin(limited, FINGERPRINT, POLICY), "new window, replay " + i);
        }
        assertInstanceOf(Decision.RateLimited.class, begin(limited, FINGERPRINT, POLICY));
        assertEquals(acquires, store.acquires.get());
        assertInstanceOf(Decision.Replay.class, begin(), "an engine without a limit never counts");
    }

    @Test
    void leaseIsRenewedUntilTheMethodStartsAndWhileItRunsButNotAfterItsWorkEndedSoAForgottenKeyFreesItself() {
        Execution execution = assertInstanceOf(Decision.Proceed.class, begin()).execution();
        scheduler.advance(LOCK_TTL);
        assertEquals(3, store.renewals.get(), "renewed while the method has not started yet (a slow filter, say)");
        execution.markStarted();
        execution.workBegins();
        scheduler.advance(LOCK_TTL.multipliedBy(2));
        assertEquals(9, store.renewals.get(), "renewed every lockTtl/3 while the method runs");
        execution.workEnded(); // the method returned, and then nobody recorded or released its outcome
        scheduler.advance(LOCK_TTL.minusMillis(1));
        assertEquals(9, store.renewals.get());
        assertInstanceOf(Decision.Conflict.class, begin());
        scheduler.advance(Duration.ofMillis(1));
        assertInstanceOf(Decision.Proceed.class, begin(), "freed lockTtl after the last renewal at the latest");
        assertTrue(execution.isRunning(), "nobody ended it; only its lease ran out");
    }

    @Test
    void renewalsStopOnceTheExecutionEnds() {
        Execution execution = proceed();
        assertEquals(1, engine.leasesHeld());
        execution.complete(CREATED);
        assertEquals(0, engine.leasesHeld());
        scheduler.advance(Duration.ofMinutes(5));
        assertEquals(0, store.renewals.get());
        assertEquals(0, scheduler.activeTasks(), "no task per request, none left behind");
    }

    @Test
    void anIdleEngineSchedulesNothingTheLeaseTickerRunsWhileLeasesAreHeldAndStopsAfterASecondWithout() {
        assertEquals(0, scheduler.activeTasks(), "nothing scheduled before the first request");
        IdempotencyEngine other = engineBuilder(store, scheduler, metrics).build();
        Execution first = proceed();
        Execution second = running(other, "second-record");
        assertEquals(2, scheduler.activeTasks(), "one ticker per engine holding leases");
        first.complete(CREATED);
        running(engine, "again-record").complete(CREATED);
        assertEquals(2, scheduler.activeTasks(), "a request after another finds the ticker running: no start and stop per request");
        scheduler.advance(Duration.ofMillis(900));
        assertEquals(2, scheduler.activeTasks(), "still within the idle second");
        scheduler.advance(Duration.ofMillis(100));
        assertEquals(1, scheduler.activeTasks(), "the idle engine's ticker stopped after ten runs without a lease");
        scheduler.advance(LOCK_TTL.multipliedBy(3));
        assertTrue(second.isRunning());
        assertInstanceOf(Decision.Conflict.class, other.begin("second-record", "second", FINGERPRINT, POLICY, ENDPOINT),
                "the other engine's lease is still renewed");
        second.complete(CREATED);
        scheduler.advance(Duration.ofSeconds(1));
        assertEquals(0, scheduler.activeTasks());

        running(engine, "third-record");
        int renewals = store.renewals.get();
        scheduler.advance(LOCK_TTL.multipliedBy(2));
        assertTrue(store.renewals.get() >= renewals + 4, "the next lease starts the ticker again");
        assertInstanceOf(Decision.Conflict.class, engine.begin("third-record", "third", FINGERPRINT, POLICY, ENDPOINT));
    }

    private static Execution running(IdempotencyEngine engine, String recordKey) {
        Execution execution = assertInstanceOf(Decision.Proceed.class,
                engine.begin(recordKey, recordKey, FINGERPRINT, POLICY, ENDPOINT)).execution();
        execution.markStarted();
        execution.workBegins();
        return execution;
    }

    @Test
    void crashedOwnersKeyFreesItselfAfterLockTtlAndTheStaleCompletionDoesNotOverwrite() {
        IdempotencyMetrics crashedMetrics = new IdempotencyMetrics();
        IdempotencyEngine crashedServer = engineBuilder(store, new ManualScheduler(clock), crashedMetrics).build();
        Execution stale = proceed(crashedServer); // its scheduler never runs: no renewals, as after a crash

        clock.advance(LOCK_TTL.minusMillis(1));
        assertInstanceOf(Decision.Conflict.class, begin());
        clock.advance(Duration.ofMillis(1));
        Execution takeover = assertInstanceOf(Decision.Proceed.class, begin()).execution();
        takeover.markStarted();

        stale.complete(response("stale result"));
        assertEquals(1, crashedMetrics.get(Event.LOST_LEASE));
        assertWarned("lost-lease");
        assertEquals(0, crashedMetrics.get(Event.COMPLETED));
        assertFalse(stale.isRunning());
        assertInstanceOf(Decision.Conflict.class, begin(), "the new owner still holds the key");

        takeover.complete(response("new owner's result"));
        assertEquals(response("new owner's result"), replayed());
    }

    @Test
    void staleCompletionAfterTheNewOwnerCompletedDoesNotOverwrite() {
        IdempotencyMetrics crashedMetrics = new IdempotencyMetrics();
        IdempotencyEngine crashedServer = engineBuilder(store, new ManualScheduler(clock), crashedMetrics).build();
        Execution stale = proceed(crashedServer);
        clock.advance(LOCK_TTL);
        proceed().complete(response("new owner's result"));

        stale.complete(response("stale result"));
        assertEquals(1, crashedMetrics.get(Event.LOST_LEASE));
        assertEquals(response("new owner's result"), replayed());
    }

    @Test
    void staleReleaseDoesNotDeleteTheNewOwnersRecord() {
        IdempotencyMetrics crashedMetrics = new IdempotencyMetrics();
        IdempotencyEngine crashedServer = engineBuilder(store, new ManualScheduler(clock), crashedMetrics).build();
        Execution stale = proceed(crashedServer);
        clock.advance(LOCK_TTL);
        Execution takeover = proceed();
        stale.release("the method answered 500");
        assertEquals(1, crashedMetrics.get(Event.LOST_LEASE));
        assertEquals(0, crashedMetrics.get(Event.RELEASED));
        assertInstanceOf(Decision.Conflict.class, begin());
        assertTrue(takeover.isRunning());
    }

    @Test
    void pausedOwnerThatResumesAfterATakeoverLearnsFromItsRenewalThatTheLeaseIsLost() {
        ManualScheduler pausedScheduler = new ManualScheduler(clock);
        IdempotencyMetrics pausedMetrics = new IdempotencyMetrics();
        Execution paused = proceed(engineBuilder(store, pausedScheduler, pausedMetrics).build());
        clock.advance(LOCK_TTL);
        Execution takeover = proceed();

        pausedScheduler.runDue(); // the paused server wakes up; its overdue renewal runs
        assertFalse(paused.isRunning());
        assertEquals(1, pausedMetrics.get(Event.LOST_LEASE));
        paused.complete(response("stale"));
        assertEquals(1, pausedMetrics.get(Event.LOST_LEASE), "counted once");

        takeover.complete(CREATED);
        assertEquals(CREATED, replayed());
    }

    @Test
    void storeUnavailableFailsClosedWith503RetryAfter() {
        store.down();
        Decision.Unavailable unavailable = assertInstanceOf(Decision.Unavailable.class, begin());
        assertEquals(Duration.ofSeconds(1), unavailable.retryAfter());
        assertEquals(1, metrics.get(Event.STORE_ERROR));
        assertWarned("unavailable");
        assertEquals(0, metrics.get(Event.FAIL_OPEN));

        IdempotencyEngine configured = engineBuilder(store, scheduler, metrics).unavailableRetryAfter(Duration.ofSeconds(7)).build();
        assertEquals(Duration.ofSeconds(7),
                assertInstanceOf(Decision.Unavailable.class, begin(configured, FINGERPRINT, POLICY)).retryAfter());
    }

    @Test
    void storeUnavailableFailsOpenByRunningUnprotected() {
        store.down();
        assertInstanceOf(Decision.Unprotected.class, begin(engine, FINGERPRINT, policy(true, Duration.ZERO)));
        assertEquals(1, metrics.get(Event.STORE_ERROR));
        assertEquals(1, metrics.get(Event.FAIL_OPEN));
        assertEquals(0, metrics.get(Event.ACQUIRED));
        assertWarned("fail-open");
    }

    @Test
    void storeDefectNeverRunsTheMethodUnprotectedEvenWhenTheEndpointFailsOpen() {
        IdempotencyStore broken = new UnreachableStore() {
            @Override
            public AcquireResult acquire(String recordKey, byte[] fingerprint, String ownerToken, Duration lockTtl) {
                throw new IllegalStateException("WRONGTYPE Operation against a key holding the wrong kind of value");
            }
        };
        IdempotencyEngine onBroken = engineBuilder(broken, scheduler, metrics).build();
        assertInstanceOf(Decision.Unavailable.class, begin(onBroken, FINGERPRINT, policy(true, Duration.ZERO)));
        assertEquals(1, metrics.get(Event.STORE_ERROR));
        assertEquals(0, metrics.get(Event.FAIL_OPEN));
    }

    /**
     * A store that refuses Idemkey's credentials or a permission: 503 even where the endpoint fails
     * open, counted as a refusal, not as a store error; one SEVERE line without a stack trace a
     * minute, FINE lines in between.
     */
    @Test
    void storeThatRefusesAccessIsAConfigurationErrorNotAnOutageLoggedOnceAMinute() {
        IdempotencyStore refusing = new UnreachableStore() {
            @Override
            public AcquireResult acquire(String recordKey, byte[] fingerprint, String ownerToken, Duration lockTtl) {
                throw new StoreAccessDeniedException("Redis refuses a command to the user: NOPERM", null);
            }
        };
        CORE_LOG.setLevel(Level.FINE);
        try {
            IdempotencyEngine onRefusing = engineBuilder(refusing, scheduler, metrics).build();
            for (int i = 0; i < 3; i++) {
                assertInstanceOf(Decision.Unavailable.class, begin(onRefusing, FINGERPRINT, policy(true, Duration.ZERO)));
                clock.advance(Duration.ofSeconds(20));
            }
            assertInstanceOf(Decision.Unavailable.class, begin(onRefusing, FINGERPRINT, POLICY)); // 60 s after the first
        } finally {
            CORE_LOG.setLevel(null);
        }
        assertEquals(4, metrics.get(Event.STORE_ACCESS_DENIED));
        assertEquals(0, metrics.get(Event.STORE_ERROR));
        assertEquals(0, metrics.get(Event.FAIL_OPEN));
        List<LogRecord> lines = logged.stream().filter(r -> r.getMessage().contains("decision=store-access-denied")).toList();
        assertEquals(List.of(Level.SEVERE, Level.FINE, Level.FINE, Level.SEVERE), lines.stream().map(LogRecord::getLevel).toList());
        assertTrue(lines.stream().allMatch(r -> r.getThrown() == null && r.getMessage().contains("NOPERM")), lines.toString());
    }

    @Test
    void unreadableRecordMayHoldAResultSoItIsNeverRunAgainEvenWhenTheEndpointFailsOpen() {
        String recordKey = RECORD_KEY;
        memory.acquire(recordKey, IdempotencyEngine.stored(FINGERPRINT), "old-version", LOCK_TTL);
        memory.complete(recordKey, "old-version", new byte[]{99, 0, 1}, Duration.ofHours(1)); // a format this engine does not know
        assertInstanceOf(Decision.Unavailable.class, begin(engine, FINGERPRINT, policy(true, Duration.ZERO)));
        assertEquals(0, metrics.get(Event.FAIL_OPEN));
        assertEquals(1, metrics.get(Event.STORE_ERROR));
    }

    /** A store that cannot be reached at all. */
    private static class UnreachableStore implements IdempotencyStore {
        final AtomicInteger calls = new AtomicInteger();

        private StoreUnavailableException down() {
            calls.incrementAndGet();
            return new StoreUnavailableException("connection refused", null);
        }

        @Override
        public AcquireResult acquire(String recordKey, byte[] fingerprint, String ownerToken, Duration lockTtl) {
            throw down();
        }

        @Override
        public boolean complete(String recordKey, String ownerToken, byte[] response, Duration ttl) {
            throw down();
        }

        @Override
        public boolean release(String recordKey, String ownerToken) {
            throw down();
        }

        @Override
        public Renewal renew(String recordKey, String ownerToken, Duration lockTtl) {
            throw down();
        }

        @Override
        public boolean isAvailable() {
            return false;
        }

        @Override
        public void close() {
        }
    }

    @Test
    void unreachableStoreGivesUnavailableForFailClosedAndUnprotectedForFailOpenWithoutAnyLease() {
        UnreachableStore unreachable = new UnreachableStore();
        IdempotencyEngine onUnreachable = engineBuilder(unreachable, scheduler, metrics).build();
        assertInstanceOf(Decision.Unavailable.class, begin(onUnreachable, FINGERPRINT, POLICY));
        assertInstanceOf(Decision.Unprotected.class, begin(onUnreachable, FINGERPRINT, policy(true, Duration.ZERO)));
        assertEquals(2, metrics.get(Event.STORE_ERROR));
        assertEquals(1, metrics.get(Event.FAIL_OPEN));
        assertEquals(2, unreachable.calls.get(), "one attempt each, no retry loop on the request path");
        assertEquals(0, onUnreachable.leasesHeld(), "no lease to renew");
    }

    @Test
    void aCompletionTheStoreDidNotTakeIsRetriedOnTheRetrySchedulerNeverOnTheLeases() {
        ManualScheduler retries = new ManualScheduler(clock);
        IdempotencyEngine separate = engineBuilder(store, scheduler, metrics).retries(retries).build();
        Execution execution = proceed(separate);
        store.down();
        execution.complete(CREATED);
        assertEquals(1, retries.activeTasks(), "the retry, on the retry scheduler");
        assertEquals(1, scheduler.activeTasks(), "the leases' scheduler holds the (idle) ticker only");
        store.up();
        retries.advance(Duration.ofSeconds(5));
        assertEquals(1, metrics.get(Event.COMPLETED));
        assertEquals(0, retries.activeTasks(), "no retry left behind");
    }

    @Test
    void aCompletionTheStoreDidNotTakeWhileTheApplicationStopsIsAbandonedAndSaid() {
        Scheduler stopped = new Scheduler() {
            @Override
            public Task everyInterval(Duration period, Runnable task) {
                throw new RejectedExecutionException("stopped");
            }

            @Override
            public Task once(Duration delay, Runnable task) {
                throw new RejectedExecutionException("stopped");
            }
        };
        IdempotencyEngine stopping = engineBuilder(store, scheduler, metrics).retries(stopped).build();
        Execution execution = proceed(stopping);
        store.down();
        execution.complete(CREATED); // nothing thrown at the caller, who delivers the response anyway
        assertEquals(1, metrics.get(Event.NOT_RECORDED));
        assertEquals(1, metrics.get(Event.DROPPED_AT_SHUTDOWN));
        assertEquals(0, metrics.get(Event.LOST_LEASE), "not a lost lease: nobody else owns the record");
        assertWarned("dropped-at-shutdown");
        assertTrue(logged.stream().anyMatch(r -> r.getMessage().startsWith("idempotency decision=dropped-at-shutdown endpoint=")
                && r.getMessage().contains(" key=") && r.getMessage().contains("operation=complete")),
                () -> logged.stream().map(LogRecord::getMessage).toList().toString());
    }

    @Test
    void aReleaseTheStoreDidNotTakeWhileTheApplicationStopsIsDroppedLoggedAndCounted() {
        ManualScheduler retries = new ManualScheduler(clock);
        IdempotencyEngine stopping = engineBuilder(store, scheduler, metrics).retries(retries).build();
        Execution execution = proceed(stopping);
        store.down();
        retries.stop();
        execution.release("the method failed");
        assertEquals(1, metrics.get(Event.DROPPED_AT_SHUTDOWN));
        assertEquals(0, metrics.get(Event.NOT_RECORDED), "a release records nothing anyway");
        assertTrue(logged.stream().anyMatch(r -> r.getLevel() == Level.WARNING
                && r.getMessage().startsWith("idempotency decision=dropped-at-shutdown endpoint=")
                && r.getMessage().contains("operation=release")),
                () -> logged.stream().map(LogRecord::getMessage).toList().toString());
        assertFalse(execution.isRunning());
    }

    @Test
    void completionWhileTheStoreIsDownIsRetriedInTheBackgroundAndSucceedsBeforeTheLeaseEnds() {
        Execution execution = proceed();
        scheduler.advance(Duration.ofSeconds(12)); // one renewal: the lease now ends at 40 s
        store.down();
        execution.complete(CREATED); // no exception: the caller delivers the response anyway
        assertEquals(1, metrics.get(Event.STORE_ERROR));
        assertEquals(0, metrics.get(Event.COMPLETED));
        assertInstanceOf(AcquireResult.InProgress.class, memory.acquire(RECORD_KEY, IdempotencyEngine.stored(FINGERPRINT), "observer", LOCK_TTL));

        scheduler.advance(Duration.ofSeconds(10)); // two background attempts, both refused
        assertTrue(metrics.get(Event.STORE_ERROR) >= 2, metrics.snapshot().toString());
        store.up();
        scheduler.advance(Duration.ofSeconds(5));
        assertEquals(1, metrics.get(Event.COMPLETED));
        assertEquals(0, metrics.get(Event.LOST_LEASE));
        assertEquals(0, metrics.get(Event.NOT_RECORDED));
        assertEquals(CREATED, replayed());

        int completes = store.completes.get();
        scheduler.advance(Duration.ofMinutes(5));
        assertEquals(completes, store.completes.get(), "the retry stopped once it succeeded");
        assertEquals(0, scheduler.activeTasks(), "no retry left behind");
    }

    @Test
    void completionThatCannotReachTheStoreBeforeTheLeaseEndsIsAbandonedAndCounted() {
        Execution execution = proceed();
        store.down();
        execution.complete(CREATED);
        scheduler.advance(LOCK_TTL.plusSeconds(10));
        store.up();
        scheduler.advance(Duration.ofMinutes(1));
        assertEquals(0, metrics.get(Event.COMPLETED));
        assertEquals(1, metrics.get(Event.LOST_LEASE));
        assertEquals(1, metrics.get(Event.NOT_RECORDED));
        assertWarned("complete-failed");
        assertWarned("complete-abandoned");
        assertEquals(0, scheduler.activeTasks(), "no retry left behind");
        assertInstanceOf(Decision.Proceed.class, begin(), "the record expired by itself: a retry runs again");
    }

    @Test
    void releaseWhileTheStoreIsDownIsRetriedInTheBackground() {
        Execution execution = proceed();
        store.down();
        execution.release("the method threw");
        store.up();
        scheduler.advance(Duration.ofSeconds(5));
        assertEquals(1, metrics.get(Event.RELEASED));
        assertInstanceOf(Decision.Proceed.class, begin());
    }

    @Test
    void renewalFailuresWhileTheStoreIsDownDoNotEndTheExecution() {
        Execution execution = proceed();
        store.down();
        scheduler.advance(Duration.ofSeconds(10));
        assertEquals(1, metrics.get(Event.STORE_ERROR));
        assertTrue(execution.isRunning());
        store.up();
        scheduler.advance(Duration.ofSeconds(10));
        assertTrue(execution.isRunning());
        scheduler.advance(Duration.ofSeconds(25));
        assertInstanceOf(Decision.Conflict.class, begin(), "renewals resumed once the store came back");
        execution.complete(CREATED);
        assertEquals(CREATED, replayed());
    }

    @Test
    void leasesDueTogetherAreRenewedInBoundedBatchesSoAStoreTakingTwoSecondsPerCallLosesNone() {
        SlowStore slow = new SlowStore(memory, Duration.ofSeconds(2));
        IdempotencyEngine onSlowStore = engineBuilder(slow, scheduler, metrics).build();
        int count = LeaseTicker.RENEWAL_BATCH + 50;
        List<Execution> executions = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            Execution execution = assertInstanceOf(Decision.Proceed.class,
                    onSlowStore.begin(RECORD_KEY + "-" + i, KEY, FINGERPRINT, POLICY, ENDPOINT)).execution();
            execution.markStarted();
            execution.workBegins();
            executions.add(execution);
        }
        Instant start = clock.instant();
        scheduler.advance(POLICY.renewalInterval()); // all due at 10 s; unrenewed, each lease ends at 30 s
        assertEquals(0, metrics.get(Event.LOST_LEASE), "renewed one by one, every lease from the 10th on would be lost");
        assertEquals(2, slow.renewCalls.get(), count + " due leases, in two calls of at most " + LeaseTicker.RENEWAL_BATCH);
        assertEquals(start.plusSeconds(14), clock.instant(), "the tick took two calls of 2 s");

        scheduler.advance(Duration.between(clock.instant(), start.plus(LOCK_TTL).plusSeconds(5)));
        assertEquals(0, metrics.get(Event.LOST_LEASE));
        for (int i = 0; i < count; i++) {
            assertInstanceOf(Decision.Conflict.class, onSlowStore.begin(RECORD_KEY + "-" + i, KEY, FINGERPRINT, POLICY, ENDPOINT),
                    "lease " + i + " still held");
            assertTrue(executions.get(i).isRunning());
        }
    }

    /** A store whose every renewal call takes {@code callTime} of the test's clock (a slow network or a busy server). */
    private final class SlowStore implements IdempotencyStore {
        private final IdempotencyStore delegate;
        private final Duration callTime;
        final AtomicInteger renewCalls = new AtomicInteger();

        SlowStore(IdempotencyStore delegate, Duration callTime) {
            this.delegate = delegate;
            this.callTime = callTime;
        }

        @Override
        public AcquireResult acquire(String recordKey, byte[] fingerprint, String ownerToken, Duration lockTtl) {
            return delegate.acquire(recordKey, fingerprint, ownerToken, lockTtl);
        }

        @Override
        public boolean complete(String recordKey, String ownerToken, byte[] response, Duration ttl) {
            return delegate.complete(recordKey, ownerToken, response, ttl);
        }

        @Override
        public boolean release(String recordKey, String ownerToken) {
            return delegate.release(recordKey, ownerToken);
        }

        @Override
        public Renewal renew(String recordKey, String ownerToken, Duration lockTtl) {
            return renew(List.of(new Lease(recordKey, ownerToken, lockTtl)))[0];
        }

        @Override
        public Renewal[] renew(List<Lease> leases) {
            renewCalls.incrementAndGet();
            clock.advance(callTime); // the reply arrives this much later; the store applies it then
            return delegate.renew(leases);
        }

        @Override
        public boolean isAvailable() {
            return true;
        }

        @Override
        public void close() {
        }
    }

    @Test
    void responseLargerThanTheStoredLimitIsNotRecordedAndTheKeyIsReleased() {
        IdempotencyEngine small = engineBuilder(store, scheduler, metrics).maxStoredResponseBytes(512).build();
        Execution execution = proceed(small);
        byte[] body = new byte[1_000];
        new Random(7).nextBytes(body);
        execution.complete(new StoredResponse(200, List.of(), body));
        assertEquals(1, metrics.get(Event.NOT_RECORDED));
        assertEquals(1, metrics.get(Event.RELEASED));
        assertEquals(0, metrics.get(Event.COMPLETED));
        assertEquals(0, store.completes.get());
        assertWarned("not-recorded");
        assertInstanceOf(Decision.Proceed.class, begin(small, FINGERPRINT, POLICY));
    }

    @Test
    void limitAppliesToTheCompressedSize() {
        IdempotencyEngine small = engineBuilder(store, scheduler, metrics).maxStoredResponseBytes(512).build();
        Execution execution = proceed(small);
        StoredResponse compressible = new StoredResponse(200, List.of(), "a".repeat(10_000).getBytes(StandardCharsets.US_ASCII));
        execution.complete(compressible);
        assertEquals(0, metrics.get(Event.NOT_RECORDED));
        assertEquals(compressible, assertInstanceOf(Decision.Replay.class, begin(small, FINGERPRINT, POLICY)).response());
    }

    @Test
    void retryThatWaitsInFlightIsReplayedOnceTheFirstCompletes() {
        Execution first = proceed();
        AtomicInteger pauses = new AtomicInteger();
        meanwhile = () -> {
            if (pauses.incrementAndGet() == 3) {
                first.complete(CREATED);
            }
        };
        Instant before = clock.instant();
        Decision decision = begin(engine, FINGERPRINT, policy(false, Duration.ofSeconds(10)));
        assertEquals(CREATED, assertInstanceOf(Decision.Replay.class, decision).response());
        assertEquals(0, metrics.get(Event.CONFLICT));
        assertEquals(1, metrics.get(Event.REPLAYED));
        assertEquals(3, sleeps.size());
        assertTrue(Duration.between(before, clock.instant()).compareTo(Duration.ofSeconds(1)) < 0,
                "polled quickly: " + sleeps);
    }

    @Test
    void retryThatWaitsInFlightGetsConflictWhenTheWaitRunsOut() {
        proceed();
        Instant before = clock.instant();
        Decision decision = begin(engine, FINGERPRINT, policy(false, Duration.ofSeconds(3)));
        assertInstanceOf(Decision.Conflict.class, decision);
        Duration waited = Duration.between(before, clock.instant());
        assertEquals(Duration.ofSeconds(3), waited, "waited exactly the bounded time: " + sleeps);
        assertTrue(sleeps.stream().allMatch(d -> d.compareTo(Duration.ofMillis(500)) <= 0), "polls are short: " + sleeps);
        assertEquals(1, metrics.get(Event.CONFLICT));
    }

    @Test
    void retryWithoutInFlightWaitGetsConflictAtOnce() {
        proceed();
        assertInstanceOf(Decision.Conflict.class, begin());
        assertEquals(List.of(), sleeps);
    }

    @Test
    void retryThatWaitsInFlightProceedsIfTheFirstIsReleased() {
        Execution first = proceed();
        meanwhile = () -> first.release("the method answered 500");
        Decision decision = begin(engine, FINGERPRINT, policy(false, Duration.ofSeconds(10)));
        assertInstanceOf(Decision.Proceed.class, decision);
    }

    @Test
    void onlyAStartedMethodsNonServerErrorOutcomeIsRecordable() {
        Execution execution = assertInstanceOf(Decision.Proceed.class, begin()).execution();
        assertFalse(execution.recordable(201), "the method never started (bean validation, 401, 415...)");
        execution.markStarted();
        assertTrue(execution.started());
        assertTrue(execution.recordable(201));
        assertTrue(execution.recordable(422), "a deterministic business failure is replayed");
        assertFalse(execution.recordable(500));
        assertFalse(execution.recordable(503));
        execution.markRetryable();
        assertFalse(execution.recordable(409));
    }

    @Test
    void aCompletedExecutionIgnoresALaterReleaseOrCompletion() {
        Execution execution = proceed();
        execution.complete(CREATED);
        execution.release("late");
        execution.complete(response("again"));
        assertEquals(1, store.completes.get());
        assertEquals(0, store.releases.get());
        assertEquals(CREATED, replayed());
        assertEquals(1, metrics.get(Event.COMPLETED));
        assertEquals(0, metrics.get(Event.RELEASED));
    }

    @Test
    void aReleasedExecutionIgnoresALaterCompletion() {
        Execution execution = proceed();
        execution.release("the method answered 500");
        execution.complete(CREATED);
        assertEquals(0, store.completes.get());
        assertEquals(1, metrics.get(Event.RELEASED));
        assertInstanceOf(Decision.Proceed.class, begin());
    }

    @Test
    void metricsHaveStableNamesAndNeverCarryTheKey() {
        proceed().complete(CREATED);
        replayed();
        assertEquals(List.of("idempotency.acquired", "idempotency.replayed", "idempotency.conflict", "idempotency.mismatch",
                "idempotency.completed", "idempotency.released", "idempotency.store.error", "idempotency.store.access.denied",
                "idempotency.lost.lease", "idempotency.fail.open", "idempotency.not.recorded", "idempotency.rate.limited",
                "idempotency.expired.deleted", "idempotency.not.replicated", "idempotency.dropped.at.shutdown"), List.copyOf(metrics.snapshot().keySet()));
        assertFalse(metrics.snapshot().toString().contains(KEY));
    }

    @Test
    void oneStructuredLogLinePerDecisionEscapesTheKey() {
        assertEquals("idempotency decision=conflict endpoint=\"POST /orders\" key=\"a\\\"b\\\\c\" status=409",
                DecisionLog.TEXT.line("conflict", ENDPOINT, "a\"b\\c", "status", 409));
    }

    /** Applies a completion but loses its reply, as when the connection drops right after Redis answered. */
    private static final class LostReplyStore implements IdempotencyStore {
        private final IdempotencyStore delegate;
        volatile boolean loseCompleteReply;

        LostReplyStore(IdempotencyStore delegate) {
            this.delegate = delegate;
        }

        @Override
        public AcquireResult acquire(String recordKey, byte[] fingerprint, String ownerToken, Duration lockTtl) {
            return delegate.acquire(recordKey, fingerprint, ownerToken, lockTtl);
        }

        @Override
        public boolean complete(String recordKey, String ownerToken, byte[] response, Duration ttl) {
            boolean applied = delegate.complete(recordKey, ownerToken, response, ttl);
            if (loseCompleteReply) {
                loseCompleteReply = false;
                throw new StoreUnavailableException("connection reset after the command ran", null);
            }
            return applied;
        }

        @Override
        public boolean release(String recordKey, String ownerToken) {
            return delegate.release(recordKey, ownerToken);
        }

        @Override
        public Renewal renew(String recordKey, String ownerToken, Duration lockTtl) {
            return delegate.renew(recordKey, ownerToken, lockTtl);
        }

        @Override
        public boolean isAvailable() {
            return true;
        }

        @Override
        public void close() {
        }
    }

    @Test
    void completionWhoseReplyWasLostIsReplayedAndNotCountedAsLost() {
        LostReplyStore lossy = new LostReplyStore(memory);
        IdempotencyEngine onLossy = engineBuilder(lossy, scheduler, metrics).build();
        Execution execution = proceed(onLossy);
        lossy.loseCompleteReply = true;
        execution.complete(CREATED);
        scheduler.advance(Duration.ofSeconds(5));
        assertEquals(CREATED, assertInstanceOf(Decision.Replay.class, begin(onLossy, FINGERPRINT, POLICY)).response());
        assertEquals(0, scheduler.activeTasks(), "no retry left behind");
    }

    @Test
    void completionWhoseReplyWasLostIsCountedAsCompleted() {
        LostReplyStore lossy = new LostReplyStore(memory);
        IdempotencyEngine onLossy = engineBuilder(lossy, scheduler, metrics).build();
        Execution execution = proceed(onLossy);
        lossy.loseCompleteReply = true;
        execution.complete(CREATED);
        scheduler.advance(Duration.ofSeconds(5));
        assertEquals(0, metrics.get(Event.LOST_LEASE), metrics.snapshot().toString());
        assertEquals(0, metrics.get(Event.NOT_RECORDED), metrics.snapshot().toString());
        assertEquals(1, metrics.get(Event.COMPLETED), metrics.snapshot().toString());
    }
}
