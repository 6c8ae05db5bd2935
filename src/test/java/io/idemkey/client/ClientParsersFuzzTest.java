package io.idemkey.client;

import com.code_intelligence.jazzer.junit.FuzzTest;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * Jazzer fuzz tests of what the client reads from a server it does not trust: {@code Retry-After} and
 * problem+json. Regression mode over {@code src/test/resources/io/idemkey/client/ClientParsersFuzzTestInputs/}
 * in {@code mvn test}; {@code JAZZER_FUZZ=1} fuzzes one.
 */
class ClientParsersFuzzTest {

    private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-11-25T12:00:00Z"), ZoneOffset.UTC);

    /** Any header value: a wait of zero or more, or none; never an exception. */
    @FuzzTest(maxDuration = "10m")
    void retryAfter(byte[] data) {
        String value = new String(data, StandardCharsets.ISO_8859_1);
        Optional<Duration> wait = RetryLoop.retryAfter(value, CLOCK);
        wait.ifPresent(w -> assertFalse(w.isNegative(), value));
    }

    /** Any status and body: a problem that keeps the body, never an exception. */
    @FuzzTest(maxDuration = "10m")
    void problem(byte[] data) {
        int status = data.length < 2 ? 503 : 100 + (((data[0] & 0xff) << 8 | (data[1] & 0xff)) % 500);
        String body = new String(data.length < 2 ? data : Arrays.copyOfRange(data, 2, data.length), StandardCharsets.UTF_8);
        Problem problem = Problem.parse(status, body);
        assertNotNull(problem);
        assertEquals(body, problem.body());
        problem.toString();
        problem.keyReused();
        problem.storeUnavailable();
    }
}
