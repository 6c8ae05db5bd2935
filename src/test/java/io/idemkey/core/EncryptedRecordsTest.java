package io.idemkey.core;

import io.idemkey.spi.AcquireResult;
import io.idemkey.spi.IdempotencyStore;
import io.idemkey.spi.Lease;
import io.idemkey.spi.RateLimit;
import io.idemkey.spi.Renewal;
import io.idemkey.store.jdbc.JdbcIdempotencyStore;
import io.idemkey.store.memory.InMemoryIdempotencyStore;
import io.idemkey.store.redis.RedisIdempotencyStore;
import io.idemkey.store.redis.RedisStoreOptions;
import io.idemkey.testing.MariaDbServer;
import io.idemkey.testing.PostgresServer;
import io.idemkey.testing.RedisServer;
import io.idemkey.testing.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import redis.clients.jedis.Jedis;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Records encrypted at rest and store keys hashed (issue 28), on every store: memory, a private Redis,
 * PostgreSQL and MariaDB. What each store holds is read raw (every Redis key and value, every column
 * of every row) and searched for the body, a header, the client's key and the caller's name.
 */
class EncryptedRecordsTest {

    private static final String TABLE = "idempotency_sealed";
    private static final IdempotencyPolicy POLICY =
            new IdempotencyPolicy(Duration.ofHours(24), Duration.ofSeconds(30), true, Set.of(), false, Duration.ZERO);
    private static final String CALLER = "alice.secret-caller";
    private static final String BODY = "{\"name\":\"Jane Doe\",\"card\":\"4111111111111111\"}";
    private static final String LOCATION = "/orders/secret-location-77";
    private static final StoredResponse SECRET = new StoredResponse(201, List.of(
            new StoredResponse.Header("Content-Type", "application/json"),
            new StoredResponse.Header("Location", LOCATION),
            new StoredResponse.Header("X-Trace", "secret-trace-header-value")), BODY.getBytes(StandardCharsets.UTF_8));
    private static final List<String> NEEDLES = List.of("Jane Doe", "4111111111111111", "secret-location-77",
            "secret-trace-header-value", CALLER, "SECRETKEY");
    private static final byte[] FINGERPRINT = new Fingerprint().of("POST", "/orders", List.of(), true,
            BODY.getBytes(StandardCharsets.UTF_8), Set.of());
    private static final byte[] IDENTIFIER_KEY = random32();
    private static final String K1 = "k1:" + Base64.getEncoder().encodeToString(random32());
    private static final String K2 = "k2:" + Base64.getEncoder().encodeToString(random32());

    private static RedisServer redis;
    private static PostgresServer postgres;
    private static MariaDbServer mariadb;
    private static ScheduledExecutorService timers;

    enum Kind { MEMORY, REDIS, POSTGRESQL, MARIADB }

    private IdempotencyStore store;
    private Kind kind;
    private final List<String> logged = new CopyOnWriteArrayList<>();
    private static final Logger CORE_LOG = Logger.getLogger("io.idemkey.core");
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord record) {
            logged.add(record.getMessage());
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    @BeforeAll
    static void startServers() {
        timers = Executors.newScheduledThreadPool(2);
        redis = RedisServer.start();
        postgres = PostgresServer.start();
        mariadb = MariaDbServer.start();
        new JdbcIdempotencyStore(postgres.dataSource(), TABLE, 2).createTable();
        new JdbcIdempotencyStore(mariadb.dataSource(), TABLE, 2).createTable();
    }

    @AfterAll
    static void stopServers() {
        timers.shutdownNow();
        for (AutoCloseable server : new AutoCloseable[] {redis, postgres, mariadb}) {
            try {
                if (server != null) {
                    server.close();
                }
            } catch (Exception ignored) {
                // the next one still stops
            }
        }
    }

    @AfterEach
    void closeStore() {
        CORE_LOG.removeHandler(capture);
        CORE_LOG.setLevel(null);
        if (store != null) {
            store.close();
        }
    }

    private IdempotencyStore open(Kind kind) {
        this.kind = kind;
        store = switch (kind) {
            case MEMORY -> new InMemoryIdempotencyStore();
            case REDIS -> RedisIdempotencyStore.open(RedisStoreOptions.fromUrl(redis.url(), null, null));
            case POSTGRESQL -> new JdbcIdempotencyStore(postgres.dataSource(), TABLE, 2);
            case MARIADB -> new JdbcIdempotencyStore(mariadb.dataSource(), TABLE, 2);
        };
        if (kind != Kind.MEMORY) {
            clear();
        }
        return store;
    }

    private void clear() {
        if (kind == Kind.REDIS) {
            try (Jedis jedis = redis.client()) {
                jedis.flushAll();
            }
        } else {
            database().update("DELETE FROM " + TABLE);
        }
    }

    private TestDatabase database() {
        return kind == Kind.POSTGRESQL ? postgres : mariadb;
    }

    /** Every byte the store holds: Redis keys and values, every column of every row. */
    private List<byte[]> everythingStored(Recording recording) {
        List<byte[]> found = new ArrayList<>(recording.seen);
        if (kind == Kind.REDIS) {
            try (Jedis jedis = redis.client()) {
                for (byte[] key : jedis.keys("*".getBytes(StandardCharsets.UTF_8))) {
                    found.add(key);
                    assertEquals("string", jedis.type(key), "Idemkey writes strings only");
                    found.add(jedis.get(key));
                }
            }
        } else if (kind != Kind.MEMORY) {
            try (Connection connection = database().dataSource().getConnection();
                 Statement statement = connection.createStatement();
                 ResultSet rows = statement.executeQuery("SELECT * FROM " + TABLE)) {
                int columns = rows.getMetaData().getColumnCount();
                while (rows.next()) {
                    for (int i = 1; i <= columns; i++) {
                        Object value = rows.getObject(i);
                        found.add(value instanceof byte[] bytes ? bytes
                                : String.valueOf(value).getBytes(StandardCharsets.UTF_8));
                    }
                }
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        }
        return found;
    }

    private static List<String> needlesIn(List<byte[]> stored, List<String> needles) {
        List<String> found = new ArrayList<>();
        for (String needle : needles) {
            byte[] n = needle.getBytes(StandardCharsets.UTF_8);
            for (byte[] haystack : stored) {
                if (haystack != null && indexOf(haystack, n) >= 0) {
                    found.add(needle);
                    break;
                }
            }
        }
        return found;
    }

    private static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    private IdempotencyEngine engine(IdempotencyStore store, String keys, boolean readUnencrypted) {
        IdempotencyEngine.Builder builder = IdempotencyEngine.builder(store, new ExecutorScheduler(timers))
                .replayCacheBytes(0); // every replay reads the store
        if (keys != null) {
            builder.codec(new RecordCodec(RecordCipher.parse(keys), readUnencrypted))
                    .identifiers(RecordIdentifiers.hashed("idempotency:", IDENTIFIER_KEY, false))
                    .recordsFromBefore(readUnencrypted);
        }
        return builder.build();
    }

    private static Decision begin(IdempotencyEngine engine, String key) {
        return engine.begin(RecordKey.of("idempotency:", CALLER, key), key, FINGERPRINT, POLICY, "POST /orders");
    }

    private static void runAndComplete(IdempotencyEngine engine, String key, StoredResponse response) {
        Execution execution = assertInstanceOf(Decision.Proceed.class, begin(engine, key)).execution();
        execution.markStarted();
        execution.complete(response);
    }

    private static StoredResponse replayed(IdempotencyEngine engine, String key) {
        return assertInstanceOf(Decision.Replay.class, begin(engine, key)).response();
    }

    private static String newKey() {
        return "SECRETKEY-" + UUID.randomUUID();
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void theStoreHoldsNoBodyHeaderKeyOrCallerAndReplaysStillWork(Kind kind) {
        Recording recording = new Recording(open(kind));
        IdempotencyEngine engine = engine(recording, K1, false);
        String key = newKey();
        runAndComplete(engine, key, SECRET);
        assertEquals(SECRET, replayed(engine, key));
        assertEquals(SECRET, replayed(engine(recording, K1, false), key), "another server with the same keys");

        List<byte[]> stored = everythingStored(recording);
        assertFalse(stored.isEmpty());
        assertEquals(List.of(), needlesIn(stored, NEEDLES), "readable in " + kind);
        assertEquals(List.of(), needlesIn(stored, List.of(key.substring(10, 18))), "a piece of the client's key");

        // the same scan sees plain text where there is some: the search above can fail
        runAndComplete(engine(recording, null, false), newKey(), SECRET);
        assertEquals(NEEDLES, needlesIn(everythingStored(recording), NEEDLES));
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void aRotatedKeyStillDecryptsAndADroppedOneIsNeitherReplayedNorRunAgain(Kind kind) {
        open(kind);
        String old = newKey();
        runAndComplete(engine(store, K1, false), old, SECRET);

        IdempotencyEngine rotated = engine(store, K2 + "," + K1, false);
        assertEquals(SECRET, replayed(rotated, old), "the old key still decrypts");
        String fresh = newKey();
        runAndComplete(rotated, fresh, SECRET);
        assertEquals(SECRET, replayed(engine(store, K2, false), fresh), "the new key encrypts");

        IdempotencyEngine dropped = engine(store, K2, false);
        assertInstanceOf(Decision.Unavailable.class, begin(dropped, old), "neither replayed nor run again");
        assertInstanceOf(Decision.Unavailable.class, begin(dropped, old));
        assertEquals(SECRET, replayed(engine(store, K1, false), old), "the record is kept for its key's return");
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void aRecordMovedToAnotherKeyDoesNotDecrypt(Kind kind) {
        open(kind);
        IdempotencyEngine engine = engine(store, K1, false);
        String original = newKey();
        runAndComplete(engine, original, SECRET);
        RecordIdentifiers ids = RecordIdentifiers.hashed("idempotency:", IDENTIFIER_KEY, false);
        String from = ids.storeKey(RecordKey.of("idempotency:", CALLER, original));
        byte[] sealed = sealedRecord(ids, from);

        String target = newKey();
        String to = ids.storeKey(RecordKey.of("idempotency:", CALLER, target));
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(to, ids.storedFingerprint(to, FINGERPRINT), "mover", Duration.ofSeconds(30)));
        assertTrue(store.complete(to, "mover", sealed, Duration.ofHours(1)));

        assertInstanceOf(Decision.Unavailable.class, begin(engine, target), "a moved record is refused, not replayed");
        assertEquals(SECRET, replayed(engine, original));
    }

    @ParameterizedTest
    @EnumSource(value = Kind.class, names = {"MEMORY", "REDIS"})
    void recordsWrittenBeforeEncryptionAreReplayedFromTheirPlainKeysInTheMigrationWindow(Kind kind) {
        open(kind);
        String before = newKey();
        runAndComplete(engine(store, null, false), before, SECRET);

        // identifiers now hashed: the plain record is looked for under its plain key in the migration window
        IdempotencyEngine migrating = engine(store, K1, true);
        assertEquals(SECRET, replayed(migrating, before), "replayed from its plain key in the migration window");

        String fresh = newKey();
        Execution execution = assertInstanceOf(Decision.Proceed.class, begin(migrating, fresh)).execution();
        String plainKey = RecordKey.of("idempotency:", CALLER, fresh);
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(plainKey, stored(FINGERPRINT), "old-server",
                Duration.ofSeconds(30)), "the plain key was let go once the hashed one was held");
        assertTrue(store.release(plainKey, "old-server"));
        execution.markStarted();
        execution.complete(SECRET);
        assertEquals(SECRET, replayed(engine(store, K1, false), fresh));
    }

    /**
     * With encryption on, the store keeps no fingerprint a reader can recompute: neither the
     * request's SHA-256 nor its first 16 bytes appear anywhere in the store, and the same request
     * under two keys, or from two callers, is kept with two different fingerprints (nothing links them).
     */
    @ParameterizedTest
    @EnumSource(Kind.class)
    void theStoredFingerprintIsKeyedAndLinksNoEqualRequests(Kind kind) {
        Recording recording = new Recording(open(kind));
        IdempotencyEngine engine = engine(recording, K1, false);
        String first = newKey();
        String second = newKey();
        runAndComplete(engine, first, SECRET);
        runAndComplete(engine, second, SECRET);
        Execution other = assertInstanceOf(Decision.Proceed.class, engine.begin(RecordKey.of("idempotency:", "bob", first),
                first, FINGERPRINT, POLICY, "POST /orders")).execution();
        other.markStarted();
        other.complete(SECRET);
        assertEquals(SECRET, replayed(engine, first));

        List<byte[]> stored = everythingStored(recording);
        for (byte[] raw : List.of(FINGERPRINT, stored(FINGERPRINT), java.util.Arrays.copyOf(FINGERPRINT, 8))) {
            assertTrue(stored.stream().noneMatch(haystack -> haystack != null && indexOf(haystack, raw) >= 0),
                    "the request's unkeyed fingerprint is in " + kind);
        }
        RecordIdentifiers ids = RecordIdentifiers.hashed("idempotency:", IDENTIFIER_KEY, false);
        io.idemkey.spi.StoreInspection inspection = (io.idemkey.spi.StoreInspection) store;
        Set<String> fingerprints = new java.util.HashSet<>();
        for (String recordKey : List.of(RecordKey.of("idempotency:", CALLER, first), RecordKey.of("idempotency:", CALLER, second),
                RecordKey.of("idempotency:", "bob", first))) {
            String storeKey = ids.storeKey(recordKey);
            byte[] kept = inspection.inspect(storeKey).orElseThrow().fingerprint();
            assertEquals(16, kept.length);
            assertTrue(java.util.Arrays.equals(ids.storedFingerprint(storeKey, FINGERPRINT), kept));
            fingerprints.add(java.util.HexFormat.of().formatHex(kept));
        }
        assertEquals(3, fingerprints.size(), "one request under two keys and from two callers: three fingerprints");
    }

    /**
     * In the migration window the engine still looks at plain store keys. A caller named {@code h}
     * whose key is the hash part of another caller's hashed store key must not reach that record
     * (with {@code h:} as the hashed keys' marker, its plain key was that record's store key).
     */
    @ParameterizedTest
    @EnumSource(value = Kind.class, names = {"MEMORY", "REDIS"})
    void aCraftedCallerNeverReachesAHashedRecordThroughItsPlainKey(Kind kind) {
        open(kind);
        IdempotencyEngine migrating = engine(store, K1, true);
        String key = newKey();
        runAndComplete(migrating, key, SECRET);
        String storeKey = RecordIdentifiers.hashed("idempotency:", IDENTIFIER_KEY, false)
                .storeKey(RecordKey.of("idempotency:", CALLER, key));
        String hash = storeKey.substring(storeKey.length() - 43);
        for (String crafted : List.of("h", "h=", "")) {
            String plainKey = RecordKey.of("idempotency:", crafted, hash);
            Decision decision = migrating.begin(plainKey, hash, FINGERPRINT, POLICY, "POST /orders");
            Execution own = assertInstanceOf(Decision.Proceed.class, decision, "caller '" + crafted + "': its own new record").execution();
            own.markStarted();
            own.complete(new StoredResponse(200, List.of(), ("{\"caller\":\"" + crafted + "\"}").getBytes(StandardCharsets.UTF_8)));
        }
        assertEquals(SECRET, replayed(migrating, key), "the hashed record is untouched");
        assertEquals(SECRET, replayed(engine(store, K1, false), key));
    }

    /**
     * A store writer who replaces a completed record's fingerprint by another request's (same store
     * key, the sealed response left as it was) does not get that response replayed to the other
     * request: the fingerprint is in the associated data. The record is refused (503), never run.
     */
    @ParameterizedTest
    @EnumSource(Kind.class)
    void aSealedResponseRetargetedToAnotherRequestUnderItsKeyIsRefused(Kind kind) {
        open(kind);
        IdempotencyEngine engine = engine(store, K1, false);
        String key = newKey();
        runAndComplete(engine, key, SECRET);
        RecordIdentifiers ids = RecordIdentifiers.hashed("idempotency:", IDENTIFIER_KEY, false);
        String storeKey = ids.storeKey(RecordKey.of("idempotency:", CALLER, key));
        byte[] sealed = sealedRecord(ids, storeKey);

        byte[] otherRequest = new Fingerprint().of("POST", "/orders", List.of(), true,
                "{\"name\":\"Jane Doe\",\"card\":\"5500000000000004\"}".getBytes(StandardCharsets.UTF_8), Set.of());
        assertEquals(io.idemkey.spi.StoreInspection.Purge.PURGED, ((io.idemkey.spi.StoreInspection) store).purge(storeKey, true));
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(storeKey, ids.storedFingerprint(storeKey, otherRequest),
                "writer", Duration.ofSeconds(30)));
        assertTrue(store.complete(storeKey, "writer", sealed, Duration.ofHours(1)));

        Decision retargeted = engine.begin(RecordKey.of("idempotency:", CALLER, key), key, otherRequest, POLICY, "POST /orders");
        assertInstanceOf(Decision.Unavailable.class, retargeted, "refused: neither replayed to the other request nor run");
        assertInstanceOf(Decision.Mismatch.class, begin(engine, key), "the original request is another request now");
    }

    /** A plain record written (by an older server) under the key a hashing server looks at. */
    private static final class RecordKeyTestKeys {
        static final String PLAIN_UNDER_HASHED = "plain-under-hashed-" + UUID.randomUUID();
    }

    @Test
    void aPlainRecordUnderTheHashedKeyIsRefusedNotReplayed() {
        open(Kind.MEMORY);
        RecordIdentifiers ids = RecordIdentifiers.hashed("idempotency:", IDENTIFIER_KEY, false);
        String key = RecordKeyTestKeys.PLAIN_UNDER_HASHED;
        String storeKey = ids.storeKey(RecordKey.of("idempotency:", CALLER, key));
        assertInstanceOf(AcquireResult.Acquired.class, store.acquire(storeKey, ids.storedFingerprint(storeKey, FINGERPRINT), "t", Duration.ofSeconds(30)));
        assertTrue(store.complete(storeKey, "t", StoredResponseCodec.encode(SECRET), Duration.ofHours(1)));
        assertInstanceOf(Decision.Unavailable.class, begin(engine(store, K1, false), key));
        assertEquals(SECRET, replayed(engine(store, K1, true), key), "read in the migration window");
    }

    @Test
    void theRateLimitCountsHashedKeysOnRedis() {
        open(Kind.REDIS);
        IdempotencyEngine engine = IdempotencyEngine.builder(store, new ExecutorScheduler(timers))
                .replayCacheBytes(0).rateLimit(new RateLimit(2, Duration.ofMinutes(1)))
                .codec(new RecordCodec(RecordCipher.parse(K1), false))
                .identifiers(RecordIdentifiers.hashed("idempotency:", IDENTIFIER_KEY, false)).build();
        String key = newKey();
        runAndComplete(engine, key, SECRET);
        assertEquals(SECRET, replayed(engine, key));
        assertInstanceOf(Decision.RateLimited.class, begin(engine, key));
        try (Jedis jedis = redis.client()) {
            for (String stored : jedis.keys("*")) {
                assertTrue(stored.startsWith("{idempotency:h=") || stored.startsWith("idempotency:h="), stored);
                assertFalse(stored.contains(key) || stored.contains(CALLER), stored);
            }
        }
    }

    @Test
    void decisionLogsShowAHashUnlessRawKeysAreAskedFor() {
        open(Kind.MEMORY);
        CORE_LOG.setLevel(Level.FINE);
        CORE_LOG.addHandler(capture);
        String key = newKey();
        runAndComplete(engine(store, K1, false), key, SECRET);
        replayed(engine(store, K1, false), key);
        assertFalse(logged.isEmpty());
        assertTrue(logged.stream().noneMatch(line -> line.contains(key) || line.contains(CALLER)), logged::toString);
        assertTrue(logged.stream().allMatch(line -> line.contains("key=\"h:")), logged::toString);

        logged.clear();
        IdempotencyEngine raw = IdempotencyEngine.builder(store, new ExecutorScheduler(timers))
                .codec(new RecordCodec(RecordCipher.parse(K1), false))
                .identifiers(RecordIdentifiers.hashed("idempotency:", IDENTIFIER_KEY, true)).build();
        replayed(raw, key);
        assertTrue(logged.stream().anyMatch(line -> line.contains(key)), "configured to log raw keys");
    }

    /** The fingerprint as the engine hands it to the store (its first 16 bytes). */
    private static byte[] stored(byte[] fingerprint) {
        return java.util.Arrays.copyOf(fingerprint, 16);
    }

    private static byte[] random32() {
        byte[] key = new byte[32];
        new SecureRandom().nextBytes(key);
        return key;
    }

    /** What reached the store: every record key, fingerprint and response it was handed (for the memory store, what it keeps). */
    private static final class Recording implements IdempotencyStore {
        final List<byte[]> seen = new CopyOnWriteArrayList<>();
        private final IdempotencyStore store;

        Recording(IdempotencyStore store) {
            this.store = store;
        }

        private void see(String key) {
            seen.add(key.getBytes(StandardCharsets.UTF_8));
        }

        @Override
        public AcquireResult acquire(String recordKey, byte[] fingerprint, String ownerToken, Duration lockTtl) {
            see(recordKey);
            seen.add(fingerprint.clone());
            return store.acquire(recordKey, fingerprint, ownerToken, lockTtl);
        }

        @Override
        public boolean complete(String recordKey, String ownerToken, byte[] response, Duration ttl) {
            see(recordKey);
            seen.add(response.clone());
            return store.complete(recordKey, ownerToken, response, ttl);
        }

        @Override
        public boolean release(String recordKey, String ownerToken) {
            see(recordKey);
            return store.release(recordKey, ownerToken);
        }

        @Override
        public Renewal renew(String recordKey, String ownerToken, Duration lockTtl) {
            see(recordKey);
            return store.renew(recordKey, ownerToken, lockTtl);
        }

        @Override
        public Renewal[] renew(List<Lease> leases) {
            leases.forEach(lease -> see(lease.recordKey()));
            return store.renew(leases);
        }

        @Override
        public boolean isAvailable() {
            return store.isAvailable();
        }

        @Override
        public void close() {
            // the test closes the real store
        }
    }

    /** The sealed record the store holds under {@code storeKey}, as a store reader sees it. */
    private byte[] sealedRecord(RecordIdentifiers ids, String storeKey) {
        return assertInstanceOf(AcquireResult.Completed.class, store.acquire(storeKey,
                ids.storedFingerprint(storeKey, FINGERPRINT), "reader", Duration.ofSeconds(30))).response();
    }
}
