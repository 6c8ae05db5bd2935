package io.idemkey.core;

import io.idemkey.core.IdempotencyMetrics.Event;
import io.idemkey.spi.IdempotencyStore;
import io.idemkey.spi.Lease;
import io.idemkey.spi.Renewal;
import io.idemkey.spi.TransactionalCompletion;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * One acquired key: the lease a first request holds while its method runs. The lease is renewed in
 * the background every {@code lockTtl / 3} until the method has started and while its work is under
 * way (until it returns or, when it answers asynchronously or streams its entity, until that ends).
 * Once the method's work ended only the time to record the response is left, so the lease is not
 * renewed then: if nobody finishes the execution, its record frees itself after {@code lockTtl} at
 * the latest. The execution ends exactly once, either
 * {@linkplain #complete completed} (the response is recorded for replay) or {@linkplain #release
 * released} (the key is deleted so that a retry runs again). Thread-safe.
 *
 * <p>State machine: {@code RUNNING → FINISHING → COMPLETED | RELEASED}, and {@code RUNNING |
 * FINISHING → LOST} when the store says another owner holds the key or the lease ran out, or when
 * the stopping application can no longer send the completion or release. Nothing
 * leaves a final state. A response recorded in the method's transaction
 * ({@link #completeInTransaction}) goes {@code RUNNING → COMMITTING}, then {@code COMPLETED} when the
 * transaction commits, or back to {@code RUNNING}, marked retryable, when it rolls back (the key is
 * then released as for any outcome that is not recorded).
 */
public final class Execution {

    private static final Logger LOG = Logger.getLogger(Execution.class.getName());

    private enum State { RUNNING, COMMITTING, FINISHING, COMPLETED, RELEASED, LOST }

    private final IdempotencyStore store;
    private final Scheduler retryScheduler;
    private final Clock clock;
    private final IdempotencyMetrics metrics;
    private final int maxStoredResponseBytes;
    private final String recordKey;
    private final String ownerToken;
    private final String key;
    /** The key as the decision log shows it (a short hash with hashed identifiers). */
    private final String shownKey;
    private final byte[] fingerprint;
    private final ReplayCache replayCache;
    private final String endpoint;
    private final IdempotencyPolicy policy;
    private final Instant acquiredAt;
    /** The status of the response being recorded, for the decision's log line. */
    private volatile int recordedStatus;

    private final AtomicReference<State> state = new AtomicReference<>(State.RUNNING);
    private volatile Instant leaseExpiresAt;
    private volatile boolean started;
    /** The method runs, answers asynchronously, or its entity is being written: the lease is renewed (as before it started). */
    private final AtomicInteger workUnderWay = new AtomicInteger();
    private volatile boolean retryable;
    private volatile boolean lastAttemptFailed;
    /** The response written in a transaction that has not ended yet (for the replay cache). */
    private volatile StoredResponse pendingReplay;
    /**
     * The response committed with the method's effects, until the response the client receives has
     * been compared with it ({@link #answered}).
     */
    private volatile StoredResponse committedWithEffects;
    private volatile Instant nextRenewalAt;
    /** A renewal of this lease was handed to the store and has not come back. */
    private volatile boolean renewalOnItsWay;
    private final IdempotencyEngine engine;

    Execution(IdempotencyEngine engine, String recordKey, String ownerToken, String key, String shownKey, byte[] fingerprint,
              String endpoint, IdempotencyPolicy policy, Instant acquiredAt) {
        this.store = engine.store();
        this.engine = engine;
        this.retryScheduler = engine.retryScheduler();
        this.clock = engine.clock();
        this.metrics = engine.metrics();
        this.maxStoredResponseBytes = engine.maxStoredResponseBytes();
        this.recordKey = recordKey;
        this.ownerToken = ownerToken;
        this.key = key;
        this.shownKey = shownKey;
        this.fingerprint = fingerprint;
        this.replayCache = engine.replayCache();
        this.endpoint = endpoint;
        this.policy = policy;
        this.acquiredAt = acquiredAt;
        this.leaseExpiresAt = acquiredAt.plus(policy.lockTtl());
    }

    /** Joins the engine's leases: renewed every {@code lockTtl / 3} until it finishes. */
    void startRenewing(Instant acquiredAt) {
        nextRenewalAt = acquiredAt.plus(policy.renewalInterval());
        engine.holdLease(this);
    }

    /**
     * Whether the lease is due for renewal at {@code now}: the method's work has not ended, the
     * renewal's time has come, and no renewal of it is on its way (one that hangs is not joined by
     * more). If so, the next renewal is booked one interval later, so the caller (the engine's lease
     * ticker) must renew it now and report with {@link #renewed}, {@link #renewalFailed} or
     * {@link #renewalPostponed}.
     */
    boolean dueForRenewal(Instant now) {
        if (state.get() != State.RUNNING) {
            stopRenewing();
            return false;
        }
        if ((!started || workUnderWay.get() > 0) && !now.isBefore(nextRenewalAt) && !renewalOnItsWay) {
            nextRenewalAt = now.plus(policy.renewalInterval());
            renewalOnItsWay = true;
            return true;
        }
        return false;
    }

    /** The renewal booked by {@link #dueForRenewal} could not be sent: due again at the next look. */
    void renewalPostponed() {
        nextRenewalAt = Instant.MIN;
        renewalOnItsWay = false;
    }

    /** When this execution's lease runs out, as far as its last renewal or acquisition knows. */
    Instant leaseExpiresAt() {
        return leaseExpiresAt;
    }

    /** This execution's lease, as the store renews it. */
    Lease lease() {
        return new Lease(recordKey, ownerToken, policy.lockTtl());
    }

    /**
     * The store's answer to a renewal sent at {@code sentAt}: extended; lost to expiry or another
     * owner; or unknown (the record was held by a transaction, such as this execution's own
     * completion being committed: the lease stays as it was, and the next renewal tries again).
     */
    void renewed(Renewal renewal, Instant sentAt) {
        if (renewal == Renewal.RENEWED) {
            leaseExpiresAt = sentAt.plus(policy.lockTtl()); // written before the lease can be due again
        }
        renewalOnItsWay = false;
        if (renewal == Renewal.UNKNOWN) {
            log(Level.FINE, "renew-deferred", "reason", "the record is held by a transaction");
        } else if (renewal == Renewal.LOST && state.compareAndSet(State.RUNNING, State.LOST)) {
            stopRenewing();
            metrics.count(Event.LOST_LEASE, endpoint);
            log(Level.WARNING, "lost-lease", "operation", "renew",
                    "reason", "the record expired or another request owns it; this outcome will not be recorded");
        }
    }

    /** The renewal did not reach the store: the lease runs on, and the next renewal tries again. */
    void renewalFailed(RuntimeException e) {
        renewalOnItsWay = false;
        metrics.count(Event.STORE_ERROR, endpoint);
        log(Level.WARNING, "renew-failed", "error", String.valueOf(e));
    }

    private void stopRenewing() {
        engine.dropLease(this);
    }

    /** The client's key, unquoted. */
    public String key() {
        return key;
    }

    /** The key as logs may show it: the key, or a short hash of it with hashed identifiers. */
    public String shownKey() {
        return shownKey;
    }

    /** The endpoint label, such as {@code POST /orders}. */
    public String endpoint() {
        return endpoint;
    }

    /** Called when the resource method is entered: only a started method's outcome is recorded. */
    public void markStarted() {
        started = true;
    }

    /**
     * Work for this execution begins (the method is entered, an asynchronous answer is pending, the
     * entity is being written): the lease is renewed until the matching {@link #workEnded()}.
     */
    public void workBegins() {
        workUnderWay.incrementAndGet();
    }

    /** The work begun by {@link #workBegins()} ended. */
    public void workEnded() {
        workUnderWay.decrementAndGet();
    }

    public boolean started() {
        return started;
    }

    /** The method asked for its outcome not to be recorded: the key will be released. */
    public void markRetryable() {
        retryable = true;
    }

    /** Whether the execution still holds its key (not finished, lease not lost). */
    public boolean isRunning() {
        return state.get() == State.RUNNING;
    }

    /**
     * Whether a response with this status is recorded for replay: the method started, did not mark
     * its outcome retryable, its last attempt did not fail, and it did not fail with a server error.
     * Anything else releases the key.
     */
    public boolean recordable(int status) {
        return started && !retryable && !lastAttemptFailed && status < 500;
    }

    /**
     * An attempt of the method failed with an exception, and another attempt may follow
     * (MicroProfile Fault Tolerance's {@code @Retry}): the key is kept for it, and no answer is
     * recorded unless a later attempt returns one (not the failure's, nor a {@code @Fallback}'s).
     */
    public void attemptFailed() {
        lastAttemptFailed = true;
    }

    /** An attempt of the method returned. */
    public void attemptSucceeded() {
        lastAttemptFailed = false;
    }

    /**
     * Records the response and ends the execution. If the store cannot be reached, the completion is
     * retried in the background while the lease lasts; the caller delivers the response either way.
     */
    public void complete(StoredResponse response) {
        byte[] encoded;
        try {
            encoded = encode(response);
        } catch (IllegalArgumentException e) {
            releaseUnrecorded(e.getMessage());
            return;
        }
        if (begin("complete")) {
            recordedStatus = response.status();
            Instant expiresNoLaterThan = clock.instant().plus(policy.ttl());
            finish("complete", Event.COMPLETED, () -> {
                boolean completed = store.complete(recordKey, ownerToken, fingerprint, encoded, policy.ttl());
                if (completed) {
                    replayCache.put(recordKey, fingerprint, response, expiresNoLaterThan);
                }
                return completed;
            });
        }
    }

    /** The stored form of a response, or an exception saying why it cannot be recorded. */
    private byte[] encode(StoredResponse response) {
        byte[] encoded;
        try {
            encoded = engine.codec().encode(recordKey, fingerprint, response);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("the response cannot be recorded: " + e.getMessage(), e);
        }
        if (encoded.length > maxStoredResponseBytes) {
            throw new IllegalArgumentException("the response takes " + encoded.length + " bytes stored, more than the "
                    + maxStoredResponseBytes + " allowed (idempotency.max-response-bytes)");
        }
        return encoded;
    }

    /**
     * Records the response inside the JTA transaction the method ran in, if the store can join it
     * ({@link IdempotencyStore#completeInTransaction}): the record then commits or rolls back with the
     * method's effects. Call {@link #transactionEnded} once the transaction has ended.
     *
     * @return {@link TransactionalCompletion#JOINED} if the record is written in the transaction;
     *         {@link TransactionalCompletion#LOST} if the lease is lost (the transaction must roll back);
     *         {@link TransactionalCompletion#NOT_JOINED} if nothing happened: record it as usual later
     * @throws RuntimeException if the store could not write the record in the transaction (a
     *         {@link io.idemkey.spi.StoreUnavailableException} when it could not be reached): the
     *         caller decides whether the transaction can still commit without it
     */
    public TransactionalCompletion completeInTransaction(StoredResponse response) {
        State now = state.get();
        if (now != State.RUNNING && now != State.LOST) {
            return TransactionalCompletion.NOT_JOINED;
        }
        byte[] encoded;
        try {
            encoded = encode(response);
        } catch (IllegalArgumentException notRecordable) {
            return TransactionalCompletion.NOT_JOINED; // the usual way releases it, saying why
        }
        TransactionalCompletion outcome;
        try {
            outcome = store.completeInTransaction(recordKey, ownerToken, encoded, policy.ttl());
        } catch (RuntimeException e) {
            metrics.count(Event.STORE_ERROR, endpoint);
            throw e;
        }
        switch (outcome) {
            case JOINED -> {
                if (state.compareAndSet(State.RUNNING, State.COMMITTING)) {
                    stopRenewing();
                    pendingReplay = response;
                } else {
                    // lost meanwhile, as the store saw it a moment ago: not ours any more after all
                    return TransactionalCompletion.LOST;
                }
            }
            case LOST -> {
                if (state.compareAndSet(State.RUNNING, State.LOST)) {
                    stopRenewing();
                    metrics.count(Event.LOST_LEASE, endpoint);
                    metrics.count(Event.NOT_RECORDED, endpoint);
                    log(Level.WARNING, "lost-lease", "operation", "complete-in-transaction",
                            "reason", "the record expired or another request owns it; the transaction rolls back");
                }
            }
            case NOT_JOINED -> {
            }
        }
        return outcome;
    }

    /**
     * The transaction the method ran in has ended. If {@link #completeInTransaction} wrote the record
     * in it: committed, the execution is completed; rolled back, the record is in progress again.
     * Whenever it rolled back, the outcome is not recorded (its effects are gone): the key is
     * released by whoever ends the request.
     */
    public void transactionEnded(boolean committed) {
        StoredResponse response = pendingReplay;
        pendingReplay = null;
        try {
            store.transactionEnded(recordKey, ownerToken);
        } catch (RuntimeException e) {
            log(Level.FINE, "transaction-ended-failed", "error", String.valueOf(e));
        }
        if (committed && state.compareAndSet(State.COMMITTING, State.COMPLETED)) {
            committedWithEffects = response;
            metrics.count(Event.COMPLETED, endpoint);
            replayCache.put(recordKey, fingerprint, response, clock.instant().plus(policy.ttl()));
            log(Level.FINE, "completed", "in", "transaction", "status", response == null ? null : response.status());
        } else if (!committed) {
            retryable = true;
            state.compareAndSet(State.COMMITTING, State.RUNNING);
            log(Level.FINE, "rolled-back", "reason", "the transaction holding the record rolled back");
        }
    }

    /**
     * The method's result rendered again while its transaction commits, once the persistence context
     * has flushed (generated ids, versions, values set by entity callbacks are there only then): if
     * it differs from the response {@link #completeInTransaction} wrote, the record takes it, inside
     * the same transaction. Called from the transaction's {@code beforeCompletion}; a response that
     * cannot be recorded, or that the store fails to write, leaves the earlier one (logged, counted):
     * the method's effects are not undone for it.
     */
    public void renderedAtCommit(StoredResponse latest) {
        StoredResponse written = pendingReplay;
        if (state.get() != State.COMMITTING || written == null || written.sameToClient(latest)) {
            return;
        }
        byte[] encoded = replacement(latest, "the response rendered before the transaction flushed");
        if (encoded == null) {
            return;
        }
        boolean replaced;
        try {
            replaced = store.replaceResponseInTransaction(recordKey, ownerToken, encoded);
        } catch (RuntimeException e) {
            metrics.count(Event.STORE_ERROR, endpoint);
            metrics.count(Event.NOT_RECORDED, endpoint);
            log(Level.WARNING, "rerecord-failed", "error", String.valueOf(e),
                    "reason", "the record keeps the response rendered before the transaction flushed");
            return;
        }
        if (replaced) {
            pendingReplay = latest;
            log(Level.FINE, "rendered-at-commit", "status", latest.status());
        } else {
            metrics.count(Event.NOT_RECORDED, endpoint);
            log(Level.WARNING, "not-rerecorded", "reason", "the store kept the response rendered before the"
                    + " transaction flushed");
        }
    }

    /** Whether the record was committed with the method's effects and waits for {@link #answered}. */
    public boolean committedWithEffects() {
        return committedWithEffects != null;
    }

    /**
     * The response the client receives, once the record committed with the method's effects: where it
     * differs from the committed one (a response filter changed it after the commit), the record
     * takes it before it goes out, so that a retry gets what the first caller got. A retry that
     * arrives between the commit and this call gets the committed response. A server error made of
     * a committed outcome is not recorded: the record keeps what the method answered.
     */
    public void answered(StoredResponse actual) {
        StoredResponse committed = committedWithEffects;
        committedWithEffects = null;
        if (committed == null || committed.sameToClient(actual)) {
            return;
        }
        if (actual.status() >= 500) {
            metrics.count(Event.NOT_RECORDED, endpoint);
            log(Level.WARNING, "not-rerecorded", "reason", "the response became " + actual.status() + " after the"
                    + " transaction committed the outcome; the record keeps the committed response");
            return;
        }
        byte[] encoded = replacement(actual, "the response committed with the method's effects");
        if (encoded == null) {
            return;
        }
        try {
            if (store.replaceResponse(recordKey, ownerToken, encoded)) {
                replayCache.put(recordKey, fingerprint, actual, clock.instant().plus(policy.ttl()));
                log(Level.FINE, "rerecorded", "reason", "the response changed after the transaction committed");
            } else {
                metrics.count(Event.NOT_RECORDED, endpoint);
                log(Level.WARNING, "not-rerecorded", "reason", "the record is gone or no longer this request's");
            }
        } catch (RuntimeException e) {
            metrics.count(Event.STORE_ERROR, endpoint);
            metrics.count(Event.NOT_RECORDED, endpoint);
            log(Level.WARNING, "rerecord-failed", "error", String.valueOf(e),
                    "reason", "the record keeps the response committed with the method's effects");
        }
    }

    /** The stored form of a later response, or null where it cannot be recorded (logged, counted): the record keeps {@code kept}. */
    private byte[] replacement(StoredResponse response, String kept) {
        try {
            return encode(response);
        } catch (IllegalArgumentException notRecordable) {
            metrics.count(Event.NOT_RECORDED, endpoint);
            log(Level.WARNING, "not-rerecorded", "reason", notRecordable.getMessage() + "; the record keeps " + kept);
            return null;
        }
    }

    /** Deletes the record so that a retry with the same key runs again, and ends the execution. */
    public void release(String reason) {
        if (begin("release")) {
            log(Level.FINE, "released", "reason", reason);
            finish("release", Event.RELEASED, () -> store.release(recordKey, ownerToken));
        }
    }

    /** Ends the execution without recording a response that was delivered (too large, say). */
    public void releaseUnrecorded(String reason) {
        if (begin("release")) {
            metrics.count(Event.NOT_RECORDED, endpoint);
            log(Level.WARNING, "not-recorded", "reason", reason);
            finish("release", Event.RELEASED, () -> store.release(recordKey, ownerToken));
        }
    }

    /** The one transition out of RUNNING; false if the execution already ended. */
    private boolean begin(String operation) {
        if (state.compareAndSet(State.RUNNING, State.FINISHING)) {
            return true;
        }
        log(Level.FINE, "ignored-" + operation, "state", state.get().name());
        return false;
    }

    private void finish(String operation, Event success, BooleanSupplier storeCall) {
        stopRenewing();
        try {
            settle(storeCall.getAsBoolean(), success, operation);
        } catch (RuntimeException e) {
            metrics.count(Event.STORE_ERROR, endpoint);
            log(Level.WARNING, operation + "-failed", "error", String.valueOf(e), "retrying", "until-lease-ends");
            retryInBackground(operation, success, storeCall);
        }
    }

    private void retryInBackground(String operation, Event success, BooleanSupplier storeCall) {
        AtomicReference<Scheduler.Task> self = new AtomicReference<>();
        Duration interval = policy.renewalInterval().dividedBy(2);
        try {
            self.set(retryScheduler.everyInterval(interval.isZero() ? Duration.ofMillis(1) : interval, () -> {
                if (state.get() != State.FINISHING) {
                    self.get().cancel();
                    return;
                }
                if (clock.instant().isAfter(leaseExpiresAt)) {
                    self.get().cancel();
                    abandon(operation, success, "store unreachable until the lease ended; the record expires by itself");
                    return;
                }
                retry(operation, success, storeCall, self.get());
            }));
        } catch (RejectedExecutionException stopping) {
            dropped(operation, success);
        }
    }

    /**
     * The completion or release after the transaction could not be handed to the scheduler: the
     * application is stopping. Ends the execution, logged and counted as {@link #dropped}.
     *
     * @param operation {@code complete} or {@code release}
     */
    public void droppedAtShutdown(String operation) {
        stopRenewing();
        if (state.get() == State.COMPLETED || state.get() == State.RELEASED || state.get() == State.LOST) {
            return;
        }
        dropped(operation, operation.equals("complete") ? Event.COMPLETED : Event.RELEASED);
    }

    /** A store call the stopping application cannot send (again): the record stays in progress until its lease ends. */
    private void dropped(String operation, Event success) {
        state.set(State.LOST);
        metrics.count(Event.DROPPED_AT_SHUTDOWN, endpoint);
        if (success == Event.COMPLETED) {
            metrics.count(Event.NOT_RECORDED, endpoint);
        }
        log(Level.WARNING, "dropped-at-shutdown", "operation", operation, "reason", "the application is stopping;"
                + " the record stays in progress until its lease ends", "leaseEndsAt", leaseExpiresAt);
    }

    private void abandon(String operation, Event success, String reason) {
        state.set(State.LOST);
        metrics.count(Event.LOST_LEASE, endpoint);
        if (success == Event.COMPLETED) {
            metrics.count(Event.NOT_RECORDED, endpoint);
        }
        log(Level.WARNING, operation + "-abandoned", "reason", reason);
    }

    private void retry(String operation, Event success, BooleanSupplier storeCall, Scheduler.Task retries) {
        try {
            boolean applied = storeCall.getAsBoolean();
            retries.cancel();
            settle(applied, success, operation);
        } catch (RuntimeException e) {
            metrics.count(Event.STORE_ERROR, endpoint);
        }
    }

    private void settle(boolean applied, Event success, String operation) {
        if (applied) {
            state.set(success == Event.COMPLETED ? State.COMPLETED : State.RELEASED);
            metrics.count(success, endpoint);
            if (success == Event.COMPLETED) {
                log(Level.FINE, "completed", "status", recordedStatus);
            }
        } else {
            state.set(State.LOST);
            metrics.count(Event.LOST_LEASE, endpoint);
            if (success == Event.COMPLETED) {
                metrics.count(Event.NOT_RECORDED, endpoint);
            }
            log(Level.WARNING, "lost-lease", "operation", operation,
                    "reason", "the record expired or another request owns it; nothing was overwritten");
        }
    }

    /** One line per decision, with how long the execution has run ({@code durationMs}); {@code fields}: name, value pairs. */
    private void log(Level level, String decision, Object... fields) {
        if (LOG.isLoggable(level)) {
            Object[] all = Arrays.copyOf(fields, fields.length + 2);
            all[fields.length] = "durationMs";
            all[fields.length + 1] = Duration.between(acquiredAt, clock.instant()).toMillis();
            LOG.log(level, engine.decisionLog().line(decision, endpoint, shownKey, all));
        }
    }
}
