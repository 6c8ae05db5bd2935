package io.idemkey.core;

import java.time.Instant;
import java.util.Arrays;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Completed records this instance has seen, kept in memory so that a replay costs no round trip.
 * Safe because a completed record does not change once settled (one committed with its method's
 * effects may take the client's response once, right after the commit: the engine caches such a
 * record read from the store only when it is older than its lock TTL); an entry never outlives its
 * record (it expires no later than the record does in the store) and is keyed by the full record
 * key, so it never crosses scopes. Bounded in entries' body bytes; past the bound, the oldest entries make room.
 * Thread-safe.
 */
final class ReplayCache {

    private record Entry(byte[] fingerprint, StoredResponse response, Instant expiresAt) {
    }

    private final long maxBytes;
    private final int maxEntryBytes;
    private final Map<String, Entry> entries = new ConcurrentHashMap<>();
    private final Queue<String> insertionOrder = new ConcurrentLinkedQueue<>();
    private final AtomicLong bytes = new AtomicLong();

    /**
     * @param maxBytes the bound of the body bytes held (0 disables the cache)
     */
    ReplayCache(long maxBytes) {
        this.maxBytes = maxBytes;
        this.maxEntryBytes = (int) Math.min(Integer.MAX_VALUE, Math.max(0, maxBytes / 64));
    }

    /** Whether the cache holds anything at all (it is off with a bound of 0). */
    boolean enabled() {
        return maxBytes > 0;
    }

    /** What the cache knows of this record now: null (ask the store), or its response and fingerprint. */
    Hit get(String recordKey, byte[] fingerprint, Instant now) {
        Entry entry = entries.get(recordKey);
        if (entry == null) {
            return null;
        }
        if (!entry.expiresAt().isAfter(now)) {
            return null; // left for the eviction order to remove: each key is queued once while it is held
        }
        return new Hit(Arrays.equals(entry.fingerprint(), fingerprint), entry.response());
    }

    /** The outcome of a lookup: the same request (replay it) or another one (422). */
    record Hit(boolean sameRequest, StoredResponse response) {
    }

    void put(String recordKey, byte[] fingerprint, StoredResponse response, Instant expiresAt) {
        int size = response.bodyLength() + 256;
        if (maxBytes == 0 || size > maxEntryBytes) {
            return;
        }
        Entry replaced = entries.put(recordKey, new Entry(fingerprint.clone(), response, expiresAt));
        if (replaced == null) {
            insertionOrder.add(recordKey);
            bytes.addAndGet(size);
        } else {
            bytes.addAndGet(size - (replaced.response().bodyLength() + 256L));
        }
        while (bytes.get() > maxBytes) {
            String oldest = insertionOrder.poll();
            if (oldest == null) {
                break;
            }
            evict(oldest);
        }
    }

    /** Forgets the key's response (an operator purged its record): the next request asks the store. */
    void forget(String recordKey) {
        evict(recordKey);
    }

    /**
     * Removes the key's entry, whichever it is by now: a put that replaced the entry this key was
     * queued for is not queued again, so its entry must go with the key (else it would stay, and
     * its bytes counted, for ever).
     */
    private void evict(String recordKey) {
        Entry entry;
        while ((entry = entries.get(recordKey)) != null) {
            if (entries.remove(recordKey, entry)) {
                bytes.addAndGet(-(entry.response().bodyLength() + 256L));
                return;
            }
        }
    }
}
