package io.idemkey.core;

import io.idemkey.store.memory.InMemoryIdempotencyStore;
import io.idemkey.testing.ManualClock;
import io.idemkey.testing.ManualScheduler;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Decision lines as JSON ({@code idempotency.log.format=json}): one object per line that JSON-P
 * reads back, with what an incident needs (decision, endpoint, status, how long it ran, the store's
 * latency) and the key only as a hash.
 */
class DecisionLogTest {

    private static final String KEY = "k-\"quoted\"\\7f3a";
    private static final String ENDPOINT = "POST /orders/{id}/pay";
    private static final IdempotencyPolicy POLICY =
            new IdempotencyPolicy(Duration.ofHours(24), Duration.ofSeconds(30), true, Set.of(), false, Duration.ZERO);
    private static final byte[] FINGERPRINT = new Fingerprint().of("POST", "/orders/1/pay", List.of(), true,
            "{}".getBytes(StandardCharsets.UTF_8), Set.of());
    /** Held strongly: the JDK keeps loggers weakly. */
    private static final Logger CORE_LOG = Logger.getLogger("io.idemkey.core");

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
    private Level levelBefore;

    @BeforeEach
    void captureDecisions() {
        levelBefore = CORE_LOG.getLevel();
        CORE_LOG.setLevel(Level.FINE);
        CORE_LOG.addHandler(capture);
        CORE_LOG.setUseParentHandlers(false);
    }

    @AfterEach
    void restoreLogs() {
        CORE_LOG.removeHandler(capture);
        CORE_LOG.setUseParentHandlers(true);
        CORE_LOG.setLevel(levelBefore);
    }

    @Test
    void jsonLineCarriesTheFieldsAndAHashOfTheKeyNeverTheKey() throws Exception {
        String line = DecisionLog.JSON.line("replayed", ENDPOINT, KEY, "status", 201, "cached", false, "storeMs", 0.412,
                "absent", null);
        JsonObject json = parse(line);
        assertEquals("idempotency", json.getString("logger"));
        assertEquals("replayed", json.getString("decision"));
        assertEquals(ENDPOINT, json.getString("endpoint"));
        assertEquals(sha256Prefix(KEY), json.getString("keyHash"));
        assertEquals(201, json.getInt("status"));
        assertFalse(json.getBoolean("cached"));
        assertEquals(0.412, json.getJsonNumber("storeMs").doubleValue());
        assertFalse(json.containsKey("absent"), "a field without a value is left out");
        assertFalse(line.contains("quoted"), "the key is never in a JSON line: " + line);
    }

    @Test
    void anyTextInAFieldStaysOneJsonLine() {
        String error = "redis.clients.jedis.exceptions.JedisConnectionException: \"Broken pipe\"\n\tat a\\b \u0001";
        String line = DecisionLog.JSON.line("unavailable", ENDPOINT, KEY, "status", 503, "error", error);
        assertFalse(line.contains("\n"), line);
        assertEquals(error, parse(line).getString("error"));
    }

    @Test
    void textLineKeepsItsShape() {
        assertEquals("idempotency decision=fail-open endpoint=\"POST /orders/{id}/pay\" key=\"k-\\\"quoted\\\"\\\\7f3a\""
                        + " reason=\"store unavailable, running unprotected\" operation=renew status=503",
                DecisionLog.TEXT.line("fail-open", ENDPOINT, KEY, "reason", "store unavailable, running unprotected",
                        "operation", "renew", "status", 503, "none", null));
    }

    @Test
    void engineLogsEachDecisionAsOneJsonLineWithStatusDurationAndStoreLatency() {
        ManualClock clock = new ManualClock();
        ManualScheduler scheduler = new ManualScheduler(clock);
        IdempotencyEngine engine = IdempotencyEngine.builder(new InMemoryIdempotencyStore(clock), scheduler)
                .clock(clock).replayCacheBytes(0).logFormat(DecisionLog.Format.JSON).build();
        String recordKey = RecordKey.of("idempotency:", "alice", KEY);

        Decision.Proceed first = assertInstanceOf(Decision.Proceed.class,
                engine.begin(recordKey, KEY, FINGERPRINT, POLICY, ENDPOINT));
        scheduler.advance(Duration.ofMillis(1500));
        first.execution().complete(new StoredResponse(201, List.of(), "{}".getBytes(StandardCharsets.UTF_8)));
        assertInstanceOf(Decision.Replay.class, engine.begin(recordKey, KEY, FINGERPRINT, POLICY, ENDPOINT));

        List<JsonObject> lines = logged.stream().map(r -> parse(r.getMessage())).toList();
        assertEquals(List.of("acquired", "completed", "replayed"), lines.stream().map(j -> j.getString("decision")).toList(),
                () -> logged.stream().map(LogRecord::getMessage).toList().toString());
        for (JsonObject line : lines) {
            assertEquals(ENDPOINT, line.getString("endpoint"));
            assertEquals(sha256Prefix(KEY), line.getString("keyHash"));
        }
        assertTrue(lines.get(0).containsKey("storeMs"), lines.get(0).toString());
        assertEquals(201, lines.get(1).getInt("status"));
        assertEquals(1500, lines.get(1).getInt("durationMs"), "from the acquire to the completion");
        assertEquals(201, lines.get(2).getInt("status"));
        assertFalse(lines.get(2).getBoolean("cached"));
        assertTrue(lines.get(2).containsKey("storeMs"));
        assertTrue(logged.stream().noneMatch(r -> r.getMessage().contains("quoted")), "the key is never logged");
    }

    private static JsonObject parse(String line) {
        try (JsonReader reader = Json.createReader(new StringReader(line))) {
            return reader.readObject();
        }
    }

    private static String sha256Prefix(String key) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(key.getBytes(StandardCharsets.UTF_8))).substring(0, 16);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
