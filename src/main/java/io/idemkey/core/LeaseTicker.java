package io.idemkey.core;

import io.idemkey.spi.IdempotencyStore;
import io.idemkey.spi.Renewal;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The leases of the executions an engine lets run, and the one periodic task that renews those that
 * are due (no task per request). The ticker runs only while leases are held, and a second after: an
 * idle application has no background work. Started by the first lease, it stops by itself after
 * {@link #IDLE_TICKS_BEFORE_STOP} runs in a row found no lease (not at every last lease dropped:
 * under load that would start and stop it about once per request). Thread-safe.
 */
final class LeaseTicker {

    /** The engine's: its renewal failures are the engine's to report. */
    private static final Logger LOG = Logger.getLogger(IdempotencyEngine.class.getName());
    /** The most leases renewed in one store call (one round trip, or one pipeline): a bound on its size. */
    static final int RENEWAL_BATCH = 100;
    /** The most renewal calls in flight at once, each on a thread of the scheduler. */
    static final int RENEWAL_CALLS = 4;
    /** The ticker stops after this many runs in a row without a lease: a second at the default tick. */
    static final int IDLE_TICKS_BEFORE_STOP = 10;

    private final IdempotencyStore store;
    private final Scheduler scheduler;
    private final Clock clock;
    private final Duration interval;
    private final Set<Execution> leases = ConcurrentHashMap.newKeySet();
    private final Object tickerLock = new Object();
    private volatile Scheduler.Task ticker;
    /** The ticker's runs in a row that found no lease; a lease held since resets it. */
    private volatile int idleTicks;
    /** Renewal calls the ticker may hand to the scheduler. */
    private final Semaphore renewalCallsHandedOut = new Semaphore(RENEWAL_CALLS);

    LeaseTicker(IdempotencyStore store, Scheduler scheduler, Clock clock, Duration tick) {
        this.store = store;
        this.scheduler = scheduler;
        this.clock = clock;
        this.interval = tick;
    }

    void hold(Execution execution) {
        leases.add(execution);
        if (idleTicks != 0) {
            idleTicks = 0;
        }
        if (ticker == null) {
            startTicker();
        }
    }

    private void startTicker() {
        synchronized (tickerLock) {
            if (ticker == null) {
                try {
                    ticker = scheduler.everyInterval(interval, this::tick);
                } catch (RuntimeException rejected) { // the executor is shutting down: the lease runs out
                    LOG.log(Level.FINE, "The lease ticker could not be scheduled", rejected);
                }
            }
        }
    }

    private void tick() {
        if (!leases.isEmpty()) {
            idleTicks = 0;
            renewDueLeases();
        } else if (++idleTicks >= IDLE_TICKS_BEFORE_STOP) {
            stopTickerIfIdle();
        }
    }

    void drop(Execution execution) {
        leases.remove(execution);
    }

    /** How many executions hold a lease right now. */
    int held() {
        return leases.size();
    }

    /**
     * Stops the ticker while no lease is held. A lease held meanwhile, whose holder still saw the
     * ticker scheduled, starts it again.
     */
    private void stopTickerIfIdle() {
        synchronized (tickerLock) {
            if (leases.isEmpty() && ticker != null) {
                ticker.cancel();
                ticker = null;
                idleTicks = 0;
            }
        }
        if (!leases.isEmpty() && ticker == null) {
            startTicker();
        }
    }

    /**
     * Renews every lease that is due, in store calls of at most
     * {@link #RENEWAL_BATCH} leases (one round trip each), up to {@link #RENEWAL_CALLS} of them at
     * once on the scheduler's threads, so that a slow store delays every due lease by about one call
     * rather than each lease by the calls of all before it. The ticker never calls the store itself:
     * a call that hangs (until the store's timeout) holds one of those calls, never the ticker. Leases
     * no call could be handed out for stay due for the next tick. The leases that run out soonest go
     * in the first calls: a store too slow for every due lease then delays all of them alike, rather
     * than starving the same ones tick after tick while those ahead of them are renewed again.
     */
    private void renewDueLeases() {
        List<Execution> due = new ArrayList<>();
        int decided = 0; // the due leases handed out or postponed so far
        try {
            Instant now = clock.instant();
            Map<Execution, Instant> expiresAt = new IdentityHashMap<>();
            for (Execution execution : leases) {
                if (execution.dueForRenewal(now)) {
                    due.add(execution);
                    expiresAt.put(execution, execution.leaseExpiresAt()); // read once: a renewal may move it
                }
            }
            due.sort(Comparator.comparing(expiresAt::get));
            for (int from = 0; from < due.size(); from += RENEWAL_BATCH) {
                List<Execution> batch = due.subList(from, Math.min(due.size(), from + RENEWAL_BATCH));
                if (!handOut(batch)) {
                    batch.forEach(Execution::renewalPostponed);
                }
                decided = from + batch.size();
            }
        } catch (RuntimeException | Error e) {
            // never let one failure end the periodic task of every lease, nor leave a lease booked
            // for a renewal that nobody sends (it would never be due again)
            due.subList(decided, due.size()).forEach(Execution::renewalPostponed);
            LOG.log(Level.WARNING, "Renewing leases failed", e);
        }
    }

    /** Renews the batch on the scheduler, if a call may be handed out now. */
    private boolean handOut(List<Execution> batch) {
        if (!renewalCallsHandedOut.tryAcquire()) {
            return false;
        }
        try {
            scheduler.once(Duration.ZERO, () -> {
                try {
                    renew(batch);
                } catch (RuntimeException | Error e) {
                    LOG.log(Level.WARNING, "Renewing leases failed", e);
                } finally {
                    renewalCallsHandedOut.release();
                }
            });
            return true;
        } catch (RuntimeException rejected) { // the executor is shutting down
            renewalCallsHandedOut.release();
            return false;
        }
    }

    private void renew(List<Execution> batch) {
        Instant sentAt = clock.instant();
        Renewal[] renewals;
        try {
            renewals = store.renew(batch.stream().map(Execution::lease).toList());
            if (renewals.length != batch.size()) {
                throw new IllegalStateException(store + " answered " + renewals.length + " renewals for " + batch.size());
            }
        } catch (RuntimeException e) {
            batch.forEach(execution -> execution.renewalFailed(e));
            return;
        } catch (Error e) {
            batch.forEach(Execution::renewalPostponed); // else booked for good: never due again
            throw e;
        }
        for (int i = 0; i < renewals.length; i++) {
            batch.get(i).renewed(renewals[i], sentAt);
        }
    }
}
