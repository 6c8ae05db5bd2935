package io.idemkey.it;

import jakarta.json.JsonObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The client side ({@link ClientRetriesTests}) and, beyond its core, eight callers through a lossy
 * network and Redis outages on the server, within and beyond the retry budget.
 */
class ClientRetriesIT extends ClientRetriesTests {

    @ParameterizedTest
    @ValueSource(strings = {"rest-client", "jaxrs"})
    void eightCallersOfTwoHundredOperationsThroughALossyNetworkTakeEachEffectExactlyOnce(String form) throws Exception {
        String run = "lossy-" + form + "-" + UUID.randomUUID();
        long droppedBefore = proxy.dropped();
        long stalledBefore = proxy.stalled();
        proxy.lose(0.20, 0.20, Duration.ofMillis(100), 0.02, Duration.ofMillis(1500));
        long started = System.nanoTime();

        List<CompletableFuture<JsonObject>> callers = new ArrayList<>();
        ExecutorService threads = Executors.newFixedThreadPool(8); // at once, however few processors
        for (int caller = 0; caller < 8; caller++) {
            String prefix = run + "-c" + caller;
            callers.add(CompletableFuture.supplyAsync(() -> call(form, "operations=200&prefix=" + prefix), threads));
        }
        threads.shutdown();
        int replayed = 0;
        for (CompletableFuture<JsonObject> caller : callers) {
            JsonObject seen = caller.get();
            assertEquals(0, seen.getJsonArray("errors").size(), () -> "no caller sees an error: " + summary(seen));
            assertEquals(200, seen.getInt("ok"), () -> summary(seen));
            replayed += seen.getInt("replayed");
        }
        long millis = Duration.ofNanos(System.nanoTime() - started).toMillis();
        proxy.reliable();

        Map<String, Integer> bookings = bookings(run);
        assertEquals(1600, bookings.size(), "every operation took effect");
        assertEquals(Map.of(), Map.copyOf(bookings.entrySet().stream().filter(e -> e.getValue() != 1)
                .collect(java.util.stream.Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue))), "none twice");
        long dropped = proxy.dropped() - droppedBefore;
        long stalled = proxy.stalled() - stalledBefore;
        assertTrue(dropped > 160, "about a fifth of the answers were lost: " + dropped);
        assertTrue(stalled > 0, "some answers came after the client's read timeout: " + stalled);
        System.out.printf("ClientRetriesIT %s on %s: 8 x 200 operations in %d ms, %d answers dropped, %d held past the read"
                + " timeout, %d callers' answers were replays, 1600 effects, none twice%n", form, server.kind(), millis,
                dropped, stalled, replayed);
    }

    @ParameterizedTest
    @ValueSource(strings = {"rest-client", "jaxrs"})
    void aRedisOutageOnTheServerIsRiddenOutWithinTheRetryBudget(String form) throws Exception {
        // Idemkey's own 503 (store-unavailable): retried by the Rest Client too, whose interface leaves 503 out
        String id = "outage-" + form + "-" + UUID.randomUUID();
        long unavailableBefore = proxy.answers(503);
        redis.stop();
        CompletableFuture<JsonObject> caller = CompletableFuture.supplyAsync(() -> call(form, "prefix=" + id));
        await().atMost(Duration.ofSeconds(30)).until(() -> proxy.answers(503) - unavailableBefore >= 2);
        redis.restart();

        JsonObject seen = caller.get();

        assertEquals(List.of(), seen.getJsonArray("errors"), seen + "\n" + server.log());
        assertEquals(1, seen.getInt("ok"));
        List<Long> unavailable = proxy.answerTimes(503);
        unavailable = unavailable.subList((int) unavailableBefore, unavailable.size());
        assertTrue(unavailable.size() >= 2, "503s answered while Redis was away: " + proxy.answers());
        List<Long> gaps = new ArrayList<>();
        for (int i = 1; i < unavailable.size(); i++) {
            gaps.add(Duration.ofNanos(unavailable.get(i) - unavailable.get(i - 1)).toMillis());
        }
        // the median: a 503 answered after the client's read timeout (a slow Redis restart) has no Retry-After to honour
        long median = gaps.stream().sorted().toList().get(gaps.size() / 2);
        assertTrue(median >= 950, "the retries waited the 503's Retry-After (1 s), not just the 20 ms backoff: " + gaps);
        assertEquals(Map.of(id, 1), bookings(id));
    }

    @Test
    void anOutageLongerThanTheBudgetEndsInRetriesExhaustedCarryingTheProblem() {
        String id = "budget-" + UUID.randomUUID();
        redis.stop();
        JsonObject seen;
        try {
            seen = call("jaxrs", "policy=global&prefix=" + id); // idempotency.client.max-attempts=2
        } finally {
            redis.restart();
        }

        JsonObject error = seen.getJsonArray("errors").getJsonObject(0);
        assertEquals("io.idemkey.client.RetriesExhaustedException", error.getString("error"), seen.toString());
        assertEquals(2, error.getInt("attempts"), "the global policy's attempts");
        assertEquals(503, error.getInt("status"));
        assertEquals("https://idemkey.io/problems/store-unavailable", error.getString("problemType"));
        assertEquals(Map.of(), bookings(id), "never ran");
    }

    /** A caller's report with its first errors only. */
    static String summary(JsonObject seen) {
        return "ok " + seen.getInt("ok") + ", statuses " + seen.get("statuses") + ", " + seen.getJsonArray("errors").size()
                + " errors, the first: " + seen.getJsonArray("errors").stream().limit(3).toList();
    }
}
