package io.idemkey.core;

import io.idemkey.spi.StoreInspection;
import io.idemkey.store.memory.InMemoryIdempotencyStore;
import io.idemkey.testing.LogCapture;
import io.idemkey.testing.ManualClock;
import io.idemkey.testing.ManualScheduler;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link RecordAdmin} over records the engine wrote, with a manual clock. */
class RecordAdminTest {

    private static final Duration TTL = Duration.ofHours(24);
    private static final Duration LOCK_TTL = Duration.ofSeconds(30);
    private static final IdempotencyPolicy POLICY = new IdempotencyPolicy(TTL, LOCK_TTL, true, Set.of(), false, Duration.ZERO);
    private static final String PREFIX = "idempotency:";
    private static final byte[] FINGERPRINT = new Fingerprint().of("POST", "/orders", List.of(), true,
            "{\"amount\":10}".getBytes(StandardCharsets.UTF_8), Set.of());

    private final ManualClock clock = new ManualClock();
    private final ManualScheduler scheduler = new ManualScheduler(clock);
    private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore(clock);
    @RegisterExtension
    final LogCapture audit = new LogCapture(RecordAdmin.AUDIT_LOGGER);

    private IdempotencyEngine engine(RecordIdentifiers identifiers, RecordCodec codec) {
        return IdempotencyEngine.builder(store, scheduler).clock(clock).identifiers(identifiers).codec(codec).build();
    }

    private Execution proceed(IdempotencyEngine engine, String recordKey, String key) {
        Execution execution = assertInstanceOf(Decision.Proceed.class,
                engine.begin(recordKey, key, FINGERPRINT, POLICY, "POST /orders")).execution();
        execution.markStarted();
        execution.workBegins();
        return execution;
    }

    @Test
    void aKeyInProgressShowsItsOwnersAgeAcrossRenewalsAndItsLeaseLeft() {
        IdempotencyEngine engine = engine(RecordIdentifiers.PLAIN, RecordCodec.PLAIN);
        RecordAdmin admin = new RecordAdmin(store, PREFIX, RecordIdentifiers.PLAIN, RecordCodec.PLAIN, TTL, clock, key -> { });
        proceed(engine, RecordKey.of(PREFIX, "alice", "k-1"), "k-1");
        for (int i = 0; i < 10; i++) { // 100 s of renewals: the lease stays short, the owner's age grows
            scheduler.advance(Duration.ofSeconds(10));
        }
        RecordAdmin.KeyState state = admin.lookUp(admin.requestStoreKey("alice", "k-1")).orElseThrow();
        assertFalse(state.completed());
        assertEquals(Duration.ofSeconds(100), state.ownerAge());
        assertTrue(state.timeLeft().compareTo(LOCK_TTL) <= 0 && state.timeLeft().compareTo(Duration.ZERO) > 0, state.timeLeft().toString());
        assertEquals(32, state.fingerprint().length(), "16 bytes, hex");
        assertTrue(admin.lookUp(admin.requestStoreKey("bob", "k-1")).isEmpty(), "another caller's key");
        assertTrue(admin.lookUp(admin.callStoreKey("alice", "k-1")).isEmpty(), "a call's key is another record");
    }

    @Test
    void aCompletedKeyShowsStatusSizeAgeAndTtlLeftAndItsBodyOnlyWhenAsked() {
        IdempotencyEngine engine = engine(RecordIdentifiers.PLAIN, RecordCodec.PLAIN);
        RecordAdmin admin = new RecordAdmin(store, PREFIX, RecordIdentifiers.PLAIN, RecordCodec.PLAIN, TTL, clock, key -> { });
        proceed(engine, RecordKey.of(PREFIX, "alice", "k-2"), "k-2").complete(new StoredResponse(201,
                List.of(new StoredResponse.Header("Location", "/orders/42")), "{\"id\":42}".getBytes(StandardCharsets.UTF_8)));
        scheduler.advance(Duration.ofMinutes(90));
        RecordAdmin.KeyState state = admin.lookUp(admin.requestStoreKey("alice", "k-2")).orElseThrow();
        assertTrue(state.completed());
        assertEquals(201, state.status());
        assertTrue(state.size() > 9, "the stored record's bytes: " + state.size());
        assertEquals(Duration.ofMinutes(90), state.age());
        assertEquals(TTL.minusMinutes(90), state.timeLeft());
        assertNull(state.body(), "no body unless asked");
        assertTrue(audit.messages().isEmpty(), "a look-up without the body is not audited");
        RecordAdmin.KeyState withBody = admin.lookUpWithBody(admin.requestStoreKey("alice", "k-2"), "ops").orElseThrow();
        assertEquals("{\"id\":42}", withBody.body().text());
        assertEquals("/orders/42", withBody.body().headers().get(0).value());
    }

    /** Every look-up of a body writes one audit line saying who looked at which record, and what came of it. */
    @Test
    void everyBodyLookUpLeavesOneAuditLineNamingWhoAndTheRecord() {
        IdempotencyEngine engine = engine(RecordIdentifiers.PLAIN, RecordCodec.PLAIN);
        RecordAdmin admin = new RecordAdmin(store, PREFIX, RecordIdentifiers.PLAIN, RecordCodec.PLAIN, TTL, clock, key -> { });
        proceed(engine, RecordKey.of(PREFIX, "alice", "k-4"), "k-4").complete(new StoredResponse(200, List.of(),
                "{\"card\":\"4111\"}".getBytes(StandardCharsets.UTF_8)));
        proceed(engine, RecordKey.of(PREFIX, "alice", "k-5"), "k-5");
        assertEquals("{\"card\":\"4111\"}", admin.lookUpWithBody(admin.requestStoreKey("alice", "k-4"), "ops").orElseThrow()
                .body().text());
        assertFalse(admin.lookUpWithBody(admin.requestStoreKey("alice", "k-5"), "ops").orElseThrow().completed());
        assertTrue(admin.lookUpWithBody(admin.requestStoreKey("bob", "k-4"), "carol \"c\"").isEmpty());
        admin.bodyRefused(admin.requestStoreKey("alice", "k-4"), "dave");
        RecordAdmin plainReader = new RecordAdmin(store, PREFIX, RecordIdentifiers.PLAIN,
                new RecordCodec(RecordCipher.parse("k1:" + Base64.getEncoder().encodeToString(new byte[32])), false),
                TTL, clock, key -> { });
        assertNull(plainReader.lookUpWithBody(admin.requestStoreKey("alice", "k-4"), "ops").orElseThrow().body().text());
        assertEquals(List.of(
                "idempotency-admin look-up-body by=\"ops\" record=\"idempotency:alice:k-4\" outcome=SHOWN",
                "idempotency-admin look-up-body by=\"ops\" record=\"idempotency:alice:k-5\" outcome=IN_PROGRESS",
                "idempotency-admin look-up-body by=\"carol \\\"c\\\"\" record=\"idempotency:bob:k-4\" outcome=ABSENT",
                "idempotency-admin look-up-body by=\"dave\" record=\"idempotency:alice:k-4\" outcome=REFUSED",
                "idempotency-admin look-up-body by=\"ops\" record=\"idempotency:alice:k-4\" outcome=UNREADABLE"),
                audit.messages());
    }

    @Test
    void withHashedIdentifiersAndEncryptionTheLookUpDerivesTheSameKeyAndTheStuckListShowsOnlyHashes() {
        byte[] hmacKey = new byte[32];
        new SecureRandom().nextBytes(hmacKey);
        RecordIdentifiers hashed = RecordIdentifiers.hashed(PREFIX, hmacKey, false);
        byte[] aes = new byte[32];
        new SecureRandom().nextBytes(aes);
        RecordCodec sealed = new RecordCodec(RecordCipher.parse("k1:" + Base64.getEncoder().encodeToString(aes)), false);
        IdempotencyEngine engine = engine(hashed, sealed);
        RecordAdmin admin = new RecordAdmin(store, PREFIX, hashed, sealed, TTL, clock, key -> { });
        proceed(engine, RecordKey.of(PREFIX, "alice", "done"), "done").complete(new StoredResponse(200, List.of(),
                "secret".getBytes(StandardCharsets.UTF_8)));
        proceed(engine, RecordKey.of(PREFIX, "alice", "stuck"), "stuck");
        scheduler.advance(Duration.ofMinutes(10));

        RecordAdmin.KeyState done = admin.lookUpWithBody(admin.requestStoreKey("alice", "done"), "ops").orElseThrow();
        assertEquals(200, done.status(), "the status stays readable in a sealed record");
        assertEquals("secret", done.body().text(), "decrypted with the application's keys");
        RecordAdmin plainReader = new RecordAdmin(store, PREFIX, hashed, RecordCodec.PLAIN, TTL, clock, key -> { });
        RecordAdmin.KeyState unreadable = plainReader.lookUpWithBody(admin.requestStoreKey("alice", "done"), "ops").orElseThrow();
        assertEquals(200, unreadable.status());
        assertNull(unreadable.body().text(), "no keys, no body");
        assertTrue(unreadable.body().unreadable().contains("encrypted"), unreadable.body().unreadable());

        RecordAdmin.StuckPage stuck = admin.stuck(Duration.ofMinutes(5), "", 10);
        assertEquals(1, stuck.records().size());
        String shown = stuck.records().get(0).storeKey();
        assertTrue(shown.startsWith(PREFIX + "h=") && !shown.contains("alice") && !shown.contains("stuck"), shown);
        assertEquals(admin.requestStoreKey("alice", "stuck"), shown, "a look-up of a suspected key gives the same hash");
    }

    @Test
    void theStuckListHoldsOnlyKeysInProgressForAtLeastTheAgeAskedPageByPage() {
        IdempotencyEngine engine = engine(RecordIdentifiers.PLAIN, RecordCodec.PLAIN);
        RecordAdmin admin = new RecordAdmin(store, PREFIX, RecordIdentifiers.PLAIN, RecordCodec.PLAIN, TTL, clock, key -> { });
        for (int i = 0; i < 7; i++) {
            proceed(engine, RecordKey.of(PREFIX, "alice", "old-" + i), "old-" + i);
        }
        scheduler.advance(Duration.ofMinutes(20));
        proceed(engine, RecordKey.of(PREFIX, "alice", "young"), "young");
        proceed(engine, RecordKey.of(PREFIX, "alice", "finished"), "finished").complete(new StoredResponse(200, List.of(), new byte[0]));
        scheduler.advance(Duration.ofSeconds(5));

        List<String> seen = new java.util.ArrayList<>();
        String cursor = "";
        do {
            RecordAdmin.StuckPage page = admin.stuck(Duration.ofMinutes(15), cursor, 3);
            page.records().forEach(record -> {
                assertTrue(record.ownerAge().compareTo(Duration.ofMinutes(15)) >= 0, record.toString());
                seen.add(record.storeKey());
            });
            cursor = page.nextCursor();
        } while (!cursor.isEmpty());
        assertEquals(7, seen.size(), seen.toString());
        assertTrue(seen.stream().allMatch(key -> key.contains(":old-")), seen.toString());
        assertThrows(IllegalArgumentException.class, () -> admin.stuck(Duration.ofMinutes(-1), "", 3));
    }

    @Test
    void aPurgeNeedsAReasonAndLeavesOneAuditLineRefusedOrNot() {
        IdempotencyEngine engine = engine(RecordIdentifiers.PLAIN, RecordCodec.PLAIN);
        RecordAdmin admin = new RecordAdmin(store, PREFIX, RecordIdentifiers.PLAIN, RecordCodec.PLAIN, TTL, clock, key -> { });
        proceed(engine, RecordKey.of(PREFIX, "alice", "k-3"), "k-3");
        String storeKey = admin.requestStoreKey("alice", "k-3");
        assertThrows(IllegalArgumentException.class, () -> admin.purge(storeKey, true, "ops", " "));
        assertThrows(IllegalArgumentException.class, () -> admin.purge(storeKey, true, "ops", "two\nlines"));
        assertTrue(audit.messages().isEmpty(), "nothing purged, nothing audited");

        assertEquals(StoreInspection.Purge.IN_PROGRESS, admin.purge(storeKey, false, "ops", "ticket 7"));
        assertEquals(StoreInspection.Purge.PURGED, admin.purge(storeKey, true, "ops", "ticket \"7\""));
        assertEquals(List.of(
                "idempotency-admin purge by=\"ops\" record=\"idempotency:alice:k-3\" force=false outcome=IN_PROGRESS reason=\"ticket 7\"",
                "idempotency-admin purge by=\"ops\" record=\"idempotency:alice:k-3\" force=true outcome=PURGED reason=\"ticket \\\"7\\\"\""),
                audit.messages());
    }

    /** A purge whose answer is lost (the store applied it, the reply timed out) is audited all the same, as failed. */
    @Test
    void aPurgeWhoseAnswerIsLostStillWritesItsAuditLine() {
        IdempotencyEngine engine = engine(RecordIdentifiers.PLAIN, RecordCodec.PLAIN);
        String storeKey = RecordKey.of(PREFIX, "alice", "k-lost");
        proceed(engine, storeKey, "k-lost");
        StoreInspection replyLost = new StoreInspection() {
            @Override
            public java.util.Optional<StoredRecord> inspect(String recordKey) {
                return store.inspect(recordKey);
            }

            @Override
            public Purge purge(String recordKey, boolean force) {
                store.purge(recordKey, force); // applied, then the answer is lost
                throw new io.idemkey.spi.StoreUnavailableException("read timed out", new java.net.SocketTimeoutException());
            }

            @Override
            public Page inProgress(String keyPrefix, String cursor, int limit) {
                return store.inProgress(keyPrefix, cursor, limit);
            }
        };
        RecordAdmin admin = new RecordAdmin(replyLost, PREFIX, RecordIdentifiers.PLAIN, RecordCodec.PLAIN, TTL, clock, key -> { });
        assertThrows(io.idemkey.spi.StoreUnavailableException.class, () -> admin.purge(storeKey, true, "ops", "INC-9"));
        assertEquals(List.of("idempotency-admin purge by=\"ops\" record=\"idempotency:alice:k-lost\" force=true"
                        + " outcome=FAILED(StoreUnavailableException) reason=\"INC-9\""),
                audit.messages());
    }

    @Test
    void aPurgedKeyIsForgottenByThisInstancesReplayCacheSoItRunsAgain() {
        IdempotencyEngine engine = IdempotencyEngine.builder(store, scheduler).clock(clock).replayCacheBytes(1 << 20).build();
        RecordAdmin admin = new RecordAdmin(store, PREFIX, RecordIdentifiers.PLAIN, RecordCodec.PLAIN, TTL, clock,
                engine::forgetReplay);
        String recordKey = RecordKey.of(PREFIX, "alice", "cached");
        proceed(engine, recordKey, "cached").complete(new StoredResponse(200, List.of(), new byte[] {1}));
        assertInstanceOf(Decision.Replay.class, engine.begin(recordKey, "cached", FINGERPRINT, POLICY, "POST /orders"));
        assertEquals(StoreInspection.Purge.PURGED, admin.purge(admin.requestStoreKey("alice", "cached"), false, "ops", "t"));
        byte[] other = new Fingerprint().of("POST", "/orders", List.of(), true, "{}".getBytes(StandardCharsets.UTF_8), Set.of());
        assertInstanceOf(Decision.Proceed.class, engine.begin(recordKey, "cached", other, POLICY, "POST /orders"),
                "another request with the purged key runs: no replay, no 422 from the cache");
    }

    @Test
    void ownerTokensCarryTheirTimeAndOldOnesNone() {
        java.time.Instant at = java.time.Instant.parse("2026-11-25T20:00:00.123Z");
        String token = OwnerTokens.newToken(at);
        assertEquals(24, token.length());
        assertEquals(at, OwnerTokens.acquiredAt(token).orElseThrow());
        assertTrue(OwnerTokens.acquiredAt("AAAAAAAAAAAAAAAA").isEmpty(), "a 16-character token from before");
    }
}
