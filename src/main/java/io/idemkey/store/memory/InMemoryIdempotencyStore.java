package io.idemkey.store.memory;

import io.idemkey.core.RequestWindows;
import io.idemkey.spi.AcquireResult;
import io.idemkey.spi.IdempotencyStore;
import io.idemkey.spi.Renewal;
import io.idemkey.spi.RateLimit;
import io.idemkey.spi.StoreInspection;
import io.idemkey.spi.StoreUnavailableException;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An {@link IdempotencyStore} in this JVM's memory: for a single instance, for tests, and where no
 * Redis is configured on purpose ({@code idempotency.store=memory}). It keeps the same contract as
 * the Redis store (atomic acquire, fencing on the owner token, expiry), but nothing is shared with
 * other instances and nothing survives a restart.
 *
 * <p>Each operation is one atomic {@link ConcurrentMap#compute}; expired records are treated as
 * absent and swept out every {@value #SWEEP_EVERY} acquisitions. Memory is bounded: at
 * {@code maxRecords} the completed records closest to expiry make room (a replay of those runs the
 * method again, as after their TTL); when only in-progress records are left, acquire reports the
 * store unavailable.
 */
public final class InMemoryIdempotencyStore implements IdempotencyStore, StoreInspection {

    static final int SWEEP_EVERY = 4096;

    private record Entry(boolean completed, byte[] fingerprint, String ownerToken, byte[] response,
                         Instant expiresAt) {
    }

    /** The default bound on the number of records held. */
    public static final int DEFAULT_MAX_RECORDS = 100_000;

    private final ConcurrentMap<String, Entry> records = new ConcurrentHashMap<>();
    private final RequestWindows windows;
    private final AtomicInteger acquisitions = new AtomicInteger();
    private final Clock clock;
    private final int maxRecords;

    public InMemoryIdempotencyStore() {
        this(Clock.systemUTC(), DEFAULT_MAX_RECORDS);
    }

    public InMemoryIdempotencyStore(Clock clock) {
        this(clock, DEFAULT_MAX_RECORDS);
    }

    public InMemoryIdempotencyStore(Clock clock, int maxRecords) {
        if (maxRecords < 1) {
            throw new IllegalArgumentException("maxRecords must be positive: " + maxRecords);
        }
        this.clock = clock;
        this.maxRecords = maxRecords;
        this.windows = new RequestWindows(maxRecords);
    }

    @Override
    public AcquireResult acquire(String recordKey, byte[] fingerprint, String ownerToken, Duration lockTtl,
                                 RateLimit limit) {
        Optional<Duration> beyondLimit = windows.count(recordKey, limit, clock.instant());
        if (beyondLimit.isPresent()) {
            return new AcquireResult.RateLimited(beyondLimit.get());
        }
        return acquire(recordKey, fingerprint, ownerToken, lockTtl);
    }

    @Override
    public boolean countsRequests() {
        return true;
    }

    @Override
    public AcquireResult acquire(String recordKey, byte[] fingerprint, String ownerToken, Duration lockTtl) {
        if (acquisitions.incrementAndGet() % SWEEP_EVERY == 0) {
            sweep();
        }
        if (records.size() >= maxRecords && !records.containsKey(recordKey)) {
            makeRoom();
        }
        Instant now = clock.instant();
        AcquireResult[] result = new AcquireResult[1];
        records.compute(recordKey, (k, existing) -> {
            if (existing == null || !existing.expiresAt().isAfter(now) || ownedBy(existing, ownerToken, now)) {
                result[0] = AcquireResult.ACQUIRED;
                return new Entry(false, fingerprint.clone(), ownerToken, null, now.plus(lockTtl));
            }
            if (!Arrays.equals(existing.fingerprint(), fingerprint)) {
                result[0] = AcquireResult.MISMATCH;
            } else if (existing.completed()) {
                result[0] = new AcquireResult.Completed(existing.response().clone(),
                        Duration.between(now, existing.expiresAt()));
            } else {
                result[0] = new AcquireResult.InProgress(Duration.between(now, existing.expiresAt()));
            }
            return existing;
        });
        return result[0];
    }

    @Override
    public boolean complete(String recordKey, String ownerToken, byte[] response, Duration ttl) {
        Instant now = clock.instant();
        boolean[] applied = new boolean[1];
        records.computeIfPresent(recordKey, (k, existing) -> {
            if (existing.completed() && ownerToken.equals(existing.ownerToken()) && existing.expiresAt().isAfter(now)) {
                applied[0] = true; // completed by this very token before
                return existing;
            }
            if (!ownedBy(existing, ownerToken, now)) {
                return existing;
            }
            applied[0] = true;
            return new Entry(true, existing.fingerprint(), ownerToken, response.clone(), now.plus(ttl));
        });
        return applied[0];
    }

    @Override
    public boolean release(String recordKey, String ownerToken) {
        Instant now = clock.instant();
        boolean[] free = {true}; // absent or expired: the key is free already
        records.computeIfPresent(recordKey, (k, existing) -> {
            if (!existing.expiresAt().isAfter(now)) {
                return null;
            }
            if (!ownedBy(existing, ownerToken, now)) {
                free[0] = false;
                return existing;
            }
            return null;
        });
        return free[0];
    }

    @Override
    public Renewal renew(String recordKey, String ownerToken, Duration lockTtl) {
        Instant now = clock.instant();
        boolean[] applied = new boolean[1];
        records.computeIfPresent(recordKey, (k, existing) -> {
            if (!ownedBy(existing, ownerToken, now)) {
                return existing;
            }
            applied[0] = true;
            return new Entry(false, existing.fingerprint(), ownerToken, null, now.plus(lockTtl));
        });
        return applied[0] ? Renewal.RENEWED : Renewal.LOST;
    }

    private static boolean ownedBy(Entry entry, String ownerToken, Instant now) {
        return !entry.completed() && ownerToken.equals(entry.ownerToken()) && entry.expiresAt().isAfter(now);
    }

    @Override
    public Optional<StoredRecord> inspect(String recordKey) {
        Entry entry = records.get(recordKey);
        Instant now = clock.instant();
        if (entry == null || !entry.expiresAt().isAfter(now)) {
            return Optional.empty();
        }
        return Optional.of(view(recordKey, entry, now));
    }

    @Override
    public Purge purge(String recordKey, boolean force) {
        Instant now = clock.instant();
        Purge[] outcome = {Purge.ABSENT};
        records.computeIfPresent(recordKey, (k, existing) -> {
            if (!existing.expiresAt().isAfter(now)) {
                return null;
            }
            if (!existing.completed() && !force) {
                outcome[0] = Purge.IN_PROGRESS;
                return existing;
            }
            outcome[0] = Purge.PURGED;
            return null;
        });
        return outcome[0];
    }

    /** In key order; the cursor is the last key of the page before, after {@code "k"}. */
    @Override
    public Page inProgress(String keyPrefix, String cursor, int limit) {
        StoreInspection.checkLimit(limit);
        if (!cursor.isEmpty() && !cursor.startsWith("k")) {
            throw new IllegalArgumentException("not a cursor of the in-memory store: " + cursor);
        }
        String after = cursor.isEmpty() ? null : cursor.substring(1);
        Instant now = clock.instant();
        List<Map.Entry<String, Entry>> found = records.entrySet().stream()
                .filter(e -> e.getKey().startsWith(keyPrefix) && (after == null || e.getKey().compareTo(after) > 0))
                .filter(e -> !e.getValue().completed() && e.getValue().expiresAt().isAfter(now))
                .sorted(Map.Entry.comparingByKey())
                .limit(limit + 1L)
                .toList();
        List<StoredRecord> page = found.stream().limit(limit).map(e -> view(e.getKey(), e.getValue(), now)).toList();
        return new Page(page, found.size() > limit ? "k" + page.get(page.size() - 1).recordKey() : "");
    }

    private static StoredRecord view(String recordKey, Entry entry, Instant now) {
        return new StoredRecord(recordKey, entry.completed(), entry.fingerprint().clone(), entry.ownerToken(),
                Duration.between(now, entry.expiresAt()), entry.completed() ? entry.response().clone() : new byte[0]);
    }

    /** The number of records held, expired ones included until the next sweep. */
    public int size() {
        return records.size();
    }

    private void sweep() {
        Instant now = clock.instant();
        records.entrySet().removeIf(e -> !e.getValue().expiresAt().isAfter(now));
        windows.sweep(now);
    }

    /** Down to 90 % of the bound: expired records first, then the completed ones closest to expiry. */
    private synchronized void makeRoom() {
        if (records.size() < maxRecords) {
            return;
        }
        sweep();
        int target = Math.max(0, maxRecords - Math.max(1, maxRecords / 10));
        records.entrySet().stream()
                .filter(e -> e.getValue().completed())
                .sorted(Comparator.comparing(e -> e.getValue().expiresAt()))
                .limit(Math.max(0, records.size() - target))
                .toList()
                .forEach(e -> records.remove(e.getKey(), e.getValue()));
        if (records.size() >= maxRecords) {
            throw new StoreUnavailableException("the in-memory store holds " + maxRecords
                    + " requests in progress, its limit", null);
        }
    }

    @Override
    public boolean isAvailable() {
        return true;
    }

    @Override
    public void close() {
        records.clear();
    }
}
