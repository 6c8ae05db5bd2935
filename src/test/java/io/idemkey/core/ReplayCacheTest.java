package io.idemkey.core;

import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ThreadLocalRandom;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ReplayCacheTest {

    private static final Instant NOW = Instant.parse("2026-11-22T00:00:00Z");
    private static final byte[] FINGERPRINT = {1, 2, 3};

    private static StoredResponse body(int bytes) {
        return new StoredResponse(200, List.of(), new byte[bytes]);
    }

    @Test
    void holdsNoMoreBodyBytesThanItsBound() {
        ReplayCache cache = new ReplayCache(64 * 1024);
        for (int i = 0; i < 1000; i++) {
            cache.put("k" + i, FINGERPRINT, body(500), NOW.plusSeconds(60));
        }
        int held = 0;
        for (int i = 0; i < 1000; i++) {
            held += cache.get("k" + i, FINGERPRINT, NOW) == null ? 0 : 1;
        }
        assertTrue(held > 0 && held * (500 + 256) <= 64 * 1024, "held " + held);
    }

    @Test
    void theOldestEntriesMakeRoomNeverTheNewest() {
        ReplayCache cache = new ReplayCache(64 * 1024);
        for (int i = 0; i < 100_000; i++) {
            cache.put("k" + i, FINGERPRINT, body(100), NOW.plusSeconds(60));
            assertNotNull(cache.get("k" + i, FINGERPRINT, NOW), "the entry just put, at " + i);
        }
        assertNull(cache.get("k0", FINGERPRINT, NOW));
    }

    @Test
    void anEntryExpiresWithItsRecord() {
        ReplayCache cache = new ReplayCache(1 << 20);
        cache.put("k", FINGERPRINT, body(10), NOW.plusSeconds(60));
        assertNotNull(cache.get("k", FINGERPRINT, NOW.plusSeconds(59)));
        assertNull(cache.get("k", FINGERPRINT, NOW.plusSeconds(60)));
    }

    @Test
    void tellsAnotherRequestFromTheSame() {
        ReplayCache cache = new ReplayCache(1 << 20);
        cache.put("k", FINGERPRINT, body(10), NOW.plusSeconds(60));
        assertTrue(cache.get("k", FINGERPRINT, NOW).sameRequest());
        assertFalse(cache.get("k", new byte[]{9}, NOW).sameRequest());
    }

    @Test
    void largeResponsesAndADisabledCacheHoldNothing() {
        ReplayCache small = new ReplayCache(64 * 1024);
        small.put("big", FINGERPRINT, body(2048), NOW.plusSeconds(60));
        assertNull(small.get("big", FINGERPRINT, NOW), "more than 1/64 of the bound is not cached");
        ReplayCache off = new ReplayCache(0);
        off.put("k", FINGERPRINT, body(10), NOW.plusSeconds(60));
        assertNull(off.get("k", FINGERPRINT, NOW));
    }

    /**
     * A put that replaces the entry an eviction is removing must not leave the new entry outside the
     * eviction order (held, and its bytes counted, for ever): threads put and replace a few keys in a
     * cache that evicts all the time; then new keys must push every one of them out.
     */
    @Test
    void concurrentReplacementsNeverOrphanAnEntry() throws Exception {
        ReplayCache cache = new ReplayCache(64 * 1024);   // 1 KiB entries at most: evictions on most puts
        int threads = 4;
        int hotKeys = 70;
        CyclicBarrier start = new CyclicBarrier(threads);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread worker = new Thread(() -> {
                try {
                    start.await();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
                ThreadLocalRandom random = ThreadLocalRandom.current();
                for (int i = 0; i < 1_000_000; i++) {
                    cache.put("hot" + random.nextInt(hotKeys), FINGERPRINT, body(700 + random.nextInt(60)), NOW.plusSeconds(60));
                }
            });
            worker.start();
            workers.add(worker);
        }
        for (Thread worker : workers) {
            worker.join();
        }
        for (int i = 0; i < 10_000; i++) {
            cache.put("new" + i, FINGERPRINT, body(100), NOW.plusSeconds(60));
        }
        List<String> orphans = new ArrayList<>();
        for (int i = 0; i < hotKeys; i++) {
            if (cache.get("hot" + i, FINGERPRINT, NOW) != null) {
                orphans.add("hot" + i);
            }
        }
        assertTrue(orphans.isEmpty(), "entries outside the eviction order: " + orphans);
    }
}
