package io.idemkey.core;

import io.idemkey.core.IdempotencyMetrics.Event;
import io.idemkey.spi.AcquireResult;
import io.idemkey.spi.IdempotencyStore;
import io.idemkey.spi.RateLimit;
import io.idemkey.spi.StoreAccessDeniedException;
import io.idemkey.spi.StoreUnavailableException;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The idempotency engine: turns "a request with this key and fingerprint arrived" into a
 * {@link Decision}, and owns the leases of the executions it lets run. Plain Java: the JAX-RS layer
 * calls it, the store and scheduler are passed in. Thread-safe.
 */
public final class IdempotencyEngine {

    private static final Logger LOG = Logger.getLogger(IdempotencyEngine.class.getName());
    private static final Duration FIRST_POLL = Duration.ofMillis(25);
    private static final Duration LONGEST_POLL = Duration.ofMillis(500);
    /** A store that refuses Idemkey's credentials or permissions is logged at SEVERE at most this often. */
    static final Duration ACCESS_DENIED_LOG_INTERVAL = Duration.ofMinutes(1);

    private final IdempotencyStore store;
    private final Scheduler scheduler;
    private final Scheduler retryScheduler;
    private final Clock clock;
    private final Sleeper sleeper;
    private final IdempotencyMetrics metrics;
    private final Duration unavailableRetryAfter;
    private final Duration conflictRetryAfterMax;
    private final int maxStoredResponseBytes;
    private final ReplayCache replayCache;
    private final RateLimit rateLimit;
    private final DecisionLog decisionLog;
    private final RecordCodec codec;
    private final RecordIdentifiers identifiers;
    /** Whether records written before encryption and hashing were turned on are still looked for. */
    private final boolean legacyRecords;
    /**
     * Replays answered from the cache never reach the store, so this instance counts every request it
     * sees per key as well (those the store counts too) and judges cached replays by that count.
     */
    private final RequestWindows seenHere = new RequestWindows(100_000);
    /** The executions holding a lease, and the periodic task that renews those that are due. */
    private final LeaseTicker leases;
    /** When a refusal ({@link StoreAccessDeniedException}) was last logged at SEVERE, in the clock's millis; MIN_VALUE: never. */
    private final AtomicLong accessDeniedLoggedAt = new AtomicLong(Long.MIN_VALUE);

    private IdempotencyEngine(Builder builder) {
        this.store = Objects.requireNonNull(builder.store, "store");
        this.scheduler = Objects.requireNonNull(builder.scheduler, "scheduler");
        this.retryScheduler = builder.retryScheduler != null ? builder.retryScheduler : builder.scheduler;
        this.clock = builder.clock;
        this.sleeper = builder.sleeper;
        this.metrics = builder.metrics;
        this.unavailableRetryAfter = builder.unavailableRetryAfter;
        this.conflictRetryAfterMax = builder.conflictRetryAfterMax;
        this.maxStoredResponseBytes = builder.maxStoredResponseBytes;
        this.replayCache = new ReplayCache(builder.replayCacheBytes);
        this.rateLimit = builder.rateLimit;
        this.decisionLog = DecisionLog.of(builder.logFormat);
        this.codec = builder.codec;
        this.identifiers = builder.identifiers;
        this.legacyRecords = builder.recordsFromBefore;
        if (rateLimit != null && !store.countsRequests()) {
            throw new IllegalArgumentException("a rate limit needs a store that counts requests; " + store + " does not");
        }
        this.leases = new LeaseTicker(store, scheduler, clock, builder.leaseTick);
        metrics.exporter().inFlight(leases::held);
    }

    void holdLease(Execution execution) {
        leases.hold(execution);
    }

    void dropLease(Execution execution) {
        leases.drop(execution);
    }

    /** How many executions hold a lease right now. */
    int leasesHeld() {
        return leases.held();
    }

    /**
     * Forgets what this instance's replay cache holds for {@code storeKey} (the key the store keeps
     * the record under): its record was purged ({@link RecordAdmin}), so the next request with the
     * key asks the store. Other instances' caches are theirs (docs/operations.md).
     */
    public void forgetReplay(String storeKey) {
        replayCache.forget(storeKey);
    }

    public static Builder builder(IdempotencyStore store, Scheduler scheduler) {
        return new Builder(store, scheduler);
    }

    /**
     * Decides what to do with a request: one store round trip (none for a replay this instance has
     * seen before; more only while waiting for an in-flight request, when the policy allows a wait).
     *
     * @param recordKey   the namespaced record key ({@link RecordKey})
     * @param key         the client's key, for logs and the application
     * @param requestFingerprint the request's {@link Fingerprint}
     * @param policy      the endpoint's policy
     * @param endpoint    a label for logs, such as {@code POST /orders}
     */
    public Decision begin(String recordKey, String key, byte[] requestFingerprint, IdempotencyPolicy policy,
                          String endpoint) {
        String clientKey = key;
        String plainKey = recordKey;
        recordKey = identifiers.storeKey(recordKey);
        byte[] fingerprint = identifiers.storedFingerprint(recordKey, requestFingerprint);
        key = identifiers.shownKey(clientKey, recordKey);
        ReplayCache.Hit cached = replayCache.get(recordKey, fingerprint, clock.instant());
        if (cached != null) {
            Optional<Duration> beyondLimit = rateLimit == null ? Optional.empty()
                    : seenHere.count(recordKey, rateLimit, clock.instant());
            if (beyondLimit.isPresent()) {
                return rateLimited(beyondLimit.get(), endpoint, key, null);
            }
            return cached.sameRequest() ? replay(cached.response(), endpoint, key, null) : mismatch(endpoint, key, null);
        }
        if (rateLimit != null && replayCache.enabled()) {
            seenHere.count(recordKey, rateLimit, clock.instant()); // the store judges this one
        }
        if (legacyRecords && identifiers.hashes()) {
            return beginBesideLegacyRecord(plainKey, stored(requestFingerprint), recordKey, clientKey, key, fingerprint,
                    policy, endpoint);
        }
        return acquire(recordKey, clientKey, key, fingerprint, policy, endpoint);
    }

    /**
     * While {@code idempotency.encryption.read-unencrypted} is on, a record may still sit under its
     * plain key, written before identifiers were hashed: that one answers first (replay, 409, 422);
     * when there is none, this request holds the plain key while it takes the hashed one, so a server
     * still on the old settings sees it in progress, then lets it go. Two round trips more per new
     * request, for the migration window only (docs/security.md). Records under plain keys keep the
     * plain fingerprint (written so before, and compared so by servers on the old settings); a plain
     * key never equals a hashed one ({@link RecordIdentifiers#HASHED_MARKER}), so no caller reaches
     * another's record this way.
     */
    private Decision beginBesideLegacyRecord(String plainKey, byte[] plainFingerprint, String recordKey, String clientKey,
                                             String key, byte[] fingerprint,
                                             IdempotencyPolicy policy, String endpoint) {
        String legacyToken = newOwnerToken();
        AcquireResult legacy;
        Instant asked = clock.instant();
        try {
            legacy = store.acquire(plainKey, plainFingerprint, legacyToken, policy.lockTtl());
        } catch (StoreUnavailableException e) {
            return storeFailed(e, policy, endpoint, key);
        } catch (StoreAccessDeniedException e) {
            return accessDenied(e, endpoint, key);
        } catch (RuntimeException e) {
            return storeBroken(e, endpoint, key);
        }
        if (legacy instanceof AcquireResult.Completed completed) {
            return replayStored(plainKey, plainFingerprint, completed, endpoint, key,
                    millis(Duration.between(asked, clock.instant())));
        }
        if (legacy instanceof AcquireResult.Mismatch) {
            return mismatch(endpoint, key, millis(Duration.between(asked, clock.instant())));
        }
        if (legacy instanceof AcquireResult.InProgress inProgress) { // no in-flight wait on this path
            metrics.count(Event.CONFLICT, endpoint);
            log(Level.FINE, "conflict", endpoint, key, "status", 409, "storeMs", millis(Duration.between(asked, clock.instant())));
            return new Decision.Conflict(conflictRetryAfter(inProgress.remainingLease()));
        }
        try {
            return acquire(recordKey, clientKey, key, fingerprint, policy, endpoint);
        } finally {
            try {
                store.release(plainKey, legacyToken);
            } catch (RuntimeException e) {
                log(Level.WARNING, "legacy-release-failed", endpoint, key,
                        "error", String.valueOf(e), "consequence", "409 for this key until the lock TTL ends");
            }
        }
    }

    private Decision replayStored(String recordKey, byte[] fingerprint, AcquireResult.Completed completed, String endpoint,
                                  String key, double storeMs) {
        StoredResponse response;
        try {
            response = codec.decode(recordKey, fingerprint, completed.response());
        } catch (UnreadableRecordException e) {
            return unreadable(e, endpoint, key);
        } catch (IllegalArgumentException e) {
            return storeBroken(e, endpoint, key);
        }
        return replay(response, endpoint, key, storeMs);
    }

    private Decision acquire(String recordKey, String clientKey, String key, byte[] fingerprint, IdempotencyPolicy policy,
                             String endpoint) {
        boolean counted = false; // a retry that waits for an in-flight request counts once
        Instant waitUntil = clock.instant().plus(policy.inFlightWait());
        Duration poll = FIRST_POLL;
        while (true) {
            String ownerToken = newOwnerToken();
            Instant attemptAt = clock.instant();
            AcquireResult result;
            try {
                result = rateLimit == null || counted ? store.acquire(recordKey, fingerprint, ownerToken, policy.lockTtl())
                        : store.acquire(recordKey, fingerprint, ownerToken, policy.lockTtl(), rateLimit);
                counted = true;
            } catch (StoreUnavailableException e) {
                return storeFailed(e, policy, endpoint, key);
            } catch (StoreAccessDeniedException e) {
                return accessDenied(e, endpoint, key);
            } catch (RuntimeException e) {
                return storeBroken(e, endpoint, key);
            }
            double storeMs = millis(Duration.between(attemptAt, clock.instant()));
            if (result instanceof AcquireResult.Acquired) {
                Execution execution = new Execution(this, recordKey, ownerToken, clientKey, key, fingerprint, endpoint, policy,
                        attemptAt);
                execution.startRenewing(attemptAt);
                metrics.count(Event.ACQUIRED, endpoint);
                log(Level.FINE, "acquired", endpoint, key, "storeMs", storeMs);
                return new Decision.Proceed(execution);
            }
            if (result instanceof AcquireResult.Completed completed) {
                StoredResponse response;
                try {
                    response = codec.decode(recordKey, fingerprint, completed.response());
                } catch (UnreadableRecordException e) {
                    return unreadable(e, endpoint, key);
                } catch (IllegalArgumentException e) {
                    return storeBroken(e, endpoint, key);
                }
                if (settled(completed, policy)) {
                    replayCache.put(recordKey, fingerprint, response, attemptAt.plus(completed.remainingTtl()));
                }
                return replay(response, endpoint, key, storeMs);
            }
            if (result instanceof AcquireResult.Mismatch) {
                return mismatch(endpoint, key, storeMs);
            }
            if (result instanceof AcquireResult.RateLimited limited) {
                return rateLimited(limited.windowLeft(), endpoint, key, storeMs);
            }
            AcquireResult.InProgress inProgress = (AcquireResult.InProgress) result;
            Duration waitLeft = Duration.between(clock.instant(), waitUntil);
            if (!waitLeft.isNegative() && !waitLeft.isZero() && pause(min(poll, waitLeft))) {
                poll = min(poll.multipliedBy(2), LONGEST_POLL);
                continue;
            }
            metrics.count(Event.CONFLICT, endpoint);
            log(Level.FINE, "conflict", endpoint, key, "status", 409, "storeMs", storeMs);
            return new Decision.Conflict(conflictRetryAfter(inProgress.remainingLease()));
        }
    }

    /** @param storeMs how long the store took to answer; null: answered from the replay cache */
    private Decision replay(StoredResponse response, String endpoint, String key, Double storeMs) {
        metrics.count(Event.REPLAYED, endpoint);
        log(Level.FINE, "replayed", endpoint, key, "status", response.status(), "cached", storeMs == null, "storeMs", storeMs);
        return new Decision.Replay(response);
    }

    private Decision rateLimited(Duration windowLeft, String endpoint, String key, Double storeMs) {
        metrics.count(Event.RATE_LIMITED, endpoint);
        log(Level.FINE, "rate-limited", endpoint, key, "status", 429, "storeMs", storeMs);
        return new Decision.RateLimited(Duration.ofSeconds(Math.max(1, (windowLeft.toMillis() + 999) / 1000)));
    }

    private Decision mismatch(String endpoint, String key, Double storeMs) {
        metrics.count(Event.MISMATCH, endpoint);
        log(Level.FINE, "mismatch", endpoint, key, "status", 422, "storeMs", storeMs);
        return new Decision.Mismatch();
    }

    /**
     * The fingerprint as records under plain store keys keep it: the first 128 bits of the SHA-256
     * ({@link RecordIdentifiers#storedFingerprint}). Compared only with the requests that reuse one
     * key in one scope, that is far beyond any chance of a collision, and it keeps a record of a
     * small answer small.
     */
    static byte[] stored(byte[] fingerprint) {
        return RecordIdentifiers.PLAIN.storedFingerprint("", fingerprint);
    }

    /**
     * 96 random bits, unique among the owners a key ever has, and the time of the acquisition, for
     * operators ({@link OwnerTokens}).
     */
    private String newOwnerToken() {
        return OwnerTokens.newToken(clock.instant());
    }

    private Decision storeFailed(RuntimeException e, IdempotencyPolicy policy, String endpoint, String key) {
        metrics.count(Event.STORE_ERROR, endpoint);
        if (policy.failOpen()) {
            metrics.count(Event.FAIL_OPEN, endpoint);
            log(Level.WARNING, "fail-open", endpoint, key,
                    "reason", "store unavailable, running unprotected", "error", String.valueOf(e));
            return new Decision.Unprotected();
        }
        log(Level.WARNING, "unavailable", endpoint, key, "status", 503, "error", String.valueOf(e));
        return new Decision.Unavailable(unavailableRetryAfter);
    }

    /**
     * The store answered something this engine cannot use (a record it cannot read, a defect): it
     * may hold a completed result, so the method must not run, even on a fail-open endpoint.
     */
    private Decision storeBroken(RuntimeException e, String endpoint, String key) {
        metrics.count(Event.STORE_ERROR, endpoint);
        LOG.log(Level.SEVERE, decisionLog.line("store-error", endpoint, key, "status", 503, "error", String.valueOf(e)), e);
        return new Decision.Unavailable(unavailableRetryAfter);
    }

    /**
     * The store refused Idemkey's credentials or a permission (a Redis ACL user without a command
     * or a key): a configuration error, counted as {@link Event#STORE_ACCESS_DENIED}, not as a store
     * error, and logged at SEVERE with what was refused, without a stack trace and at most once per
     * {@link #ACCESS_DENIED_LOG_INTERVAL} (FINE in between). 503, even where the endpoint fails
     * open: the store may hold this key's completed record, and the method must not run twice.
     */
    private Decision accessDenied(StoreAccessDeniedException e, String endpoint, String key) {
        metrics.count(Event.STORE_ACCESS_DENIED, endpoint);
        long now = clock.millis();
        long last = accessDeniedLoggedAt.get();
        boolean severe = (last == Long.MIN_VALUE || now - last >= ACCESS_DENIED_LOG_INTERVAL.toMillis())
                && accessDeniedLoggedAt.compareAndSet(last, now);
        log(severe ? Level.SEVERE : Level.FINE, "store-access-denied", endpoint, key, "status", 503,
                "error", e.getMessage());
        return new Decision.Unavailable(unavailableRetryAfter);
    }

    /**
     * A completed record the configured keys cannot read: never replayed, never run again; 503 until
     * its key is configured again or it expires (see docs/security.md).
     */
    private Decision unreadable(UnreadableRecordException e, String endpoint, String key) {
        metrics.count(Event.STORE_ERROR, endpoint);
        LOG.log(Level.SEVERE, decisionLog.line("record-unreadable", endpoint, key, "status", 503, "error", e.getMessage()));
        return new Decision.Unavailable(unavailableRetryAfter);
    }

    private boolean pause(Duration duration) {
        try {
            sleeper.sleep(duration);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** About the time left on the owner's lease, whole seconds, at least 1, capped. */
    private Duration conflictRetryAfter(Duration remainingLease) {
        long seconds = Math.max(1, (remainingLease.toMillis() + 999) / 1000);
        return min(Duration.ofSeconds(seconds), conflictRetryAfterMax);
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    IdempotencyStore store() {
        return store;
    }

    Scheduler scheduler() {
        return scheduler;
    }

    /** Where a completion or release the store did not take is tried again (the engine's scheduler unless the builder says). */
    Scheduler retryScheduler() {
        return retryScheduler;
    }

    Clock clock() {
        return clock;
    }

    int maxStoredResponseBytes() {
        return maxStoredResponseBytes;
    }

    RecordCodec codec() {
        return codec;
    }

    /**
     * Whether a completed record read from the store is kept in the replay cache: always, unless the
     * store joins transactions and the record is younger than its lock TTL. A record committed with
     * its method's effects may still take, once, the response its client received
     * ({@link Execution#answered}) right after the commit; an instance that replays it meanwhile must
     * not keep the earlier response for the record's whole life.
     */
    private boolean settled(AcquireResult.Completed completed, IdempotencyPolicy policy) {
        return !store.joinsTransactions() || policy.ttl().minus(completed.remainingTtl()).compareTo(policy.lockTtl()) >= 0;
    }

    ReplayCache replayCache() {
        return replayCache;
    }

    public IdempotencyMetrics metrics() {
        return metrics;
    }

    DecisionLog decisionLog() {
        return decisionLog;
    }

    /** One line per decision ({@link DecisionLog}); {@code fields}: name, value pairs. */
    private void log(Level level, String decision, String endpoint, String key, Object... fields) {
        if (LOG.isLoggable(level)) {
            LOG.log(level, decisionLog.line(decision, endpoint, key, fields));
        }
    }

    /** Milliseconds, to the microsecond: how long a store call took. */
    private static double millis(Duration took) {
        return Math.round(took.toNanos() / 1_000.0) / 1_000.0;
    }

    /** Builds an engine; store and scheduler are required, the rest has production defaults. */
    public static final class Builder {
        private final IdempotencyStore store;
        private final Scheduler scheduler;
        private Scheduler retryScheduler;
        private Clock clock = Clock.systemUTC();
        private Sleeper sleeper = Sleeper.THREAD;
        private IdempotencyMetrics metrics = new IdempotencyMetrics();
        private Duration unavailableRetryAfter = Duration.ofSeconds(1);
        private Duration conflictRetryAfterMax = Duration.ofSeconds(5);
        private int maxStoredResponseBytes = 1 << 20;
        private long replayCacheBytes = 16L << 20;
        private Duration leaseTick = Duration.ofMillis(100);
        private RateLimit rateLimit;
        private DecisionLog.Format logFormat = DecisionLog.Format.TEXT;
        private RecordCodec codec = RecordCodec.PLAIN;
        private RecordIdentifiers identifiers = RecordIdentifiers.PLAIN;
        private boolean recordsFromBefore;

        /** How records are encoded for the store: plain (default) or encrypted. */
        public Builder codec(RecordCodec codec) {
            this.codec = Objects.requireNonNull(codec);
            return this;
        }

        /**
         * Whether records written before encryption or hashing was turned on are still looked for
         * (under their plain keys, while {@code idempotency.encryption.read-unencrypted} is on).
         */
        public Builder recordsFromBefore(boolean recordsFromBefore) {
            this.recordsFromBefore = recordsFromBefore;
            return this;
        }

        /** What the store's keys hold: the record keys (default) or their HMAC. */
        public Builder identifiers(RecordIdentifiers identifiers) {
            this.identifiers = Objects.requireNonNull(identifiers);
            return this;
        }

        private Builder(IdempotencyStore store, Scheduler scheduler) {
            this.store = store;
            this.scheduler = scheduler;
        }

        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock);
            return this;
        }

        public Builder sleeper(Sleeper sleeper) {
            this.sleeper = Objects.requireNonNull(sleeper);
            return this;
        }

        public Builder metrics(IdempotencyMetrics metrics) {
            this.metrics = Objects.requireNonNull(metrics);
            return this;
        }

        /** The {@code Retry-After} of a 503 when the store is unreachable (default 1 s). */
        public Builder unavailableRetryAfter(Duration retryAfter) {
            this.unavailableRetryAfter = Objects.requireNonNull(retryAfter);
            return this;
        }

        /** The largest {@code Retry-After} of a 409 (default 5 s). */
        public Builder conflictRetryAfterMax(Duration retryAfter) {
            this.conflictRetryAfterMax = Objects.requireNonNull(retryAfter);
            return this;
        }

        /** The largest response record kept, in its stored (compressed) form (default 1 MiB). */
        public Builder maxStoredResponseBytes(int bytes) {
            this.maxStoredResponseBytes = bytes;
            return this;
        }

        /**
         * The body bytes of completed records kept in memory, so that replays cost no round trip
         * (default 16 MiB; 0 turns the cache off).
         */
        public Builder replayCacheBytes(long bytes) {
            this.replayCacheBytes = bytes;
            return this;
        }

        /**
         * How often the engine looks for leases due for renewal (default 100 ms; a lease is renewed
         * every lockTtl / 3, at most this much later).
         */
        public Builder leaseTick(Duration tick) {
            this.leaseTick = Objects.requireNonNull(tick);
            return this;
        }

        /**
         * Where a completion or release the store did not take is tried again until the lease ends
         * (default: the engine's scheduler). A server gives it another pool than the leases', so
         * that retries blocked in a slow store never hold up the renewals.
         */
        public Builder retries(Scheduler retries) {
            this.retryScheduler = Objects.requireNonNull(retries);
            return this;
        }

        /**
         * At most this many requests per record key (key and caller scope) per window, counted by the
         * store in the acquire round trip (default: no limit). The store must count requests.
         */
        public Builder rateLimit(RateLimit limit) {
            this.rateLimit = limit;
            return this;
        }

        /** How decision lines are logged (default {@link DecisionLog.Format#TEXT}). */
        public Builder logFormat(DecisionLog.Format format) {
            this.logFormat = Objects.requireNonNull(format);
            return this;
        }

        public IdempotencyEngine build() {
            return new IdempotencyEngine(this);
        }
    }
}
