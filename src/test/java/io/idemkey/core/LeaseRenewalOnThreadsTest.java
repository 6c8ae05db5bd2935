package io.idemkey.core;

import io.idemkey.spi.AcquireResult;
import io.idemkey.spi.IdempotencyStore;
import io.idemkey.spi.Lease;
import io.idemkey.spi.Renewal;
import io.idemkey.store.memory.InMemoryIdempotencyStore;
import io.idemkey.testing.FlakyStore;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Lease renewal on real threads and the real clock, against a store whose every renewal call is
 * slow: the due leases are renewed by several calls at once, never more than the bound.
 */
class LeaseRenewalOnThreadsTest {

    private static final Duration LOCK_TTL = Duration.ofSeconds(3); // renewed every second
    private static final Duration CALL_TIME = Duration.ofMillis(300);
    private static final IdempotencyPolicy POLICY =
            new IdempotencyPolicy(Duration.ofHours(1), LOCK_TTL, true, Set.of(), false, Duration.ZERO);
    private static final byte[] FINGERPRINT = new Fingerprint().of("POST", "/orders", List.of(), true,
            "{}".getBytes(StandardCharsets.UTF_8), Set.of());

    @Test
    void dueLeasesAreRenewedByBoundedConcurrentCallsSoASlowStoreLosesNone() throws Exception {
        // more leases due each second than the calls can renew (a free call is handed out at the next
        // 100 ms tick, so 300-400 ms a call): four calls at once renew 1,000-1,333 leases a second, so
        // each of 1,600 is renewed every 1.2-1.6 s, well inside its 3 s when the soonest to run out go
        // first; one call at a time (250-333 a second) would take 4.8-6.4 s; and leases taken in any
        // fixed order would renew the first ones every second and never reach the last
        int leases = 16 * LeaseTicker.RENEWAL_BATCH;
        InMemoryIdempotencyStore memory = new InMemoryIdempotencyStore();
        SlowRenewals store = new SlowRenewals(memory);
        IdempotencyMetrics metrics = new IdempotencyMetrics();
        ScheduledExecutorService threads = Executors.newScheduledThreadPool(LeaseTicker.RENEWAL_CALLS + 2);
        ExecutorScheduler scheduler = new ExecutorScheduler(threads);
        try {
            IdempotencyEngine engine = IdempotencyEngine.builder(store, scheduler).metrics(metrics).build();
            List<Execution> executions = new ArrayList<>();
            for (int i = 0; i < leases; i++) {
                Execution execution = assertInstanceOf(Decision.Proceed.class,
                        engine.begin("lease-" + i, "k" + i, FINGERPRINT, POLICY, "POST /orders")).execution();
                execution.markStarted();
                execution.workBegins();
                executions.add(execution);
            }

            await().atMost(Duration.ofSeconds(20)).until(() -> store.renewed.get() >= 3L * leases // three rounds
                    || metrics.get(IdempotencyMetrics.Event.LOST_LEASE) > 0);

            assertEquals(0, metrics.get(IdempotencyMetrics.Event.LOST_LEASE), "leases lost while renewals queued");
            assertTrue(executions.stream().allMatch(Execution::isRunning), "every lease still held");
            // and held in the store: a lease never sent for renewal is lost there without the engine knowing
            for (int i = 0; i < leases; i++) {
                assertInstanceOf(AcquireResult.InProgress.class, memory.acquire("lease-" + i, IdempotencyEngine.stored(FINGERPRINT),
                        "another", LOCK_TTL), "lease-" + i + " ran out in the store");
            }
            assertTrue(store.mostAtOnce.get() > 1, "calls overlapped: " + store.mostAtOnce.get());
            assertTrue(store.mostAtOnce.get() <= LeaseTicker.RENEWAL_CALLS,
                    "at most " + LeaseTicker.RENEWAL_CALLS + " calls at once: " + store.mostAtOnce.get());
        } finally {
            scheduler.cancelAll();
            threads.shutdownNow();
        }
    }

    /**
     * A renewal call that hangs (a store that stopped answering, until its timeout) holds one of the
     * calls, never the ticker: the leases in the other calls go on being renewed, and the hanging
     * call's leases are not sent again while it is on its way.
     */
    @Test
    void aRenewalCallThatHangsDoesNotStopTheOtherLeasesRenewals() throws Exception {
        int leases = LeaseTicker.RENEWAL_BATCH + 50;
        InMemoryIdempotencyStore memory = new InMemoryIdempotencyStore();
        HangingPartialBatches store = new HangingPartialBatches(memory);
        IdempotencyMetrics metrics = new IdempotencyMetrics();
        ScheduledExecutorService threads = Executors.newScheduledThreadPool(LeaseTicker.RENEWAL_CALLS + 2);
        ExecutorScheduler scheduler = new ExecutorScheduler(threads);
        try {
            IdempotencyEngine engine = IdempotencyEngine.builder(store, scheduler).metrics(metrics).build();
            Map<String, Execution> executions = new HashMap<>();
            for (int i = 0; i < leases; i++) {
                Execution execution = assertInstanceOf(Decision.Proceed.class,
                        engine.begin("lease-" + i, "k" + i, FINGERPRINT, POLICY, "POST /orders")).execution();
                execution.markStarted();
                execution.workBegins();
                executions.put("lease-" + i, execution);
            }
            Thread.sleep(LOCK_TTL.multipliedBy(2).toMillis()); // a lease renewed by nobody is gone after 3 s

            Set<String> renewedInFullCalls = new HashSet<>(store.renewedInFullCalls);
            renewedInFullCalls.removeAll(store.hanging);
            assertTrue(renewedInFullCalls.size() >= LeaseTicker.RENEWAL_BATCH / 2,
                    renewedInFullCalls.size() + " leases renewed by calls that did not hang");
            for (String lease : renewedInFullCalls) {
                assertTrue(executions.get(lease).isRunning(), lease + " was lost while another call hung");
                assertInstanceOf(AcquireResult.InProgress.class, memory.acquire(lease, IdempotencyEngine.stored(FINGERPRINT), "another", LOCK_TTL),
                        lease + " expired while another call hung");
            }
            assertTrue(store.sentWhileHanging.get() == 0, store.sentWhileHanging.get()
                    + " renewals sent again for leases whose renewal was still on its way");
        } finally {
            store.release.countDown();
            scheduler.cancelAll();
            threads.shutdownNow();
        }
    }

    /** Renewal calls of fewer leases than a full batch hang until released; full ones answer at once. */
    private static final class HangingPartialBatches extends FlakyStore {
        final CountDownLatch release = new CountDownLatch(1);
        final Set<String> hanging = ConcurrentHashMap.newKeySet();
        final Set<String> renewedInFullCalls = ConcurrentHashMap.newKeySet();
        final AtomicInteger sentWhileHanging = new AtomicInteger();

        HangingPartialBatches(IdempotencyStore delegate) {
            super(delegate);
        }

        @Override
        public Renewal[] renew(List<Lease> leases) {
            if (leases.size() == LeaseTicker.RENEWAL_BATCH) {
                leases.forEach(lease -> renewedInFullCalls.add(lease.recordKey()));
                leases.stream().filter(lease -> hanging.contains(lease.recordKey())).forEach(lease -> sentWhileHanging.incrementAndGet());
                return super.renew(leases);
            }
            for (Lease lease : leases) {
                if (!hanging.add(lease.recordKey())) {
                    sentWhileHanging.incrementAndGet();
                }
            }
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return super.renew(leases);
        }
    }

    /** Every renewal call takes {@link #CALL_TIME}; counts the calls in flight. */
    private static final class SlowRenewals extends FlakyStore {
        final AtomicInteger inFlight = new AtomicInteger();
        final AtomicInteger mostAtOnce = new AtomicInteger();
        final AtomicInteger renewed = new AtomicInteger();

        SlowRenewals(IdempotencyStore delegate) {
            super(delegate);
        }

        @Override
        public Renewal[] renew(List<Lease> leases) {
            int now = inFlight.incrementAndGet();
            mostAtOnce.accumulateAndGet(now, Math::max);
            try {
                Thread.sleep(CALL_TIME.toMillis());
                Renewal[] extended = super.renew(leases);
                renewed.addAndGet(leases.size());
                return extended;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            } finally {
                inFlight.decrementAndGet();
            }
        }
    }
}
