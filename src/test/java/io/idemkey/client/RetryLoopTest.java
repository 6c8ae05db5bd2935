package io.idemkey.client;

import io.idemkey.core.Sleeper;
import io.idemkey.testing.ManualClock;
import jakarta.ws.rs.ProcessingException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.EOFException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The client's retry loop, with a manual clock: which answers are retried, how long it waits, when it gives up. */
class RetryLoopTest {

    private static final String PROBLEM_503 = "{\"type\":\"https://idemkey.io/problems/store-unavailable\",\"title\":\"Idempotency"
            + " store unavailable\",\"status\":503,\"detail\":\"Redis is down\"}";
    private static final String PROBLEM_422 = "{\"type\":\"https://idemkey.io/problems/key-reused\",\"title\":\"Idempotency key"
            + " reused\",\"status\":422,\"detail\":\"another body\"}";

    /** The wall clock (for Retry-After dates), which a test may step as NTP does. */
    private final ManualClock clock = new ManualClock();
    private final SteppedClock wallClock = new SteppedClock(clock);
    /** The monotonic clock (for the budget), in nanoseconds. */
    private long nanoTime = 987_654_321L;
    private final List<Duration> waits = new ArrayList<>();
    private Duration wallClockStepAtFirstWait = Duration.ZERO;
    private final Sleeper sleeper = d -> {
        waits.add(d);
        clock.advance(d);
        nanoTime += d.toNanos();
        if (waits.size() == 1) {
            wallClock.step(wallClockStepAtFirstWait);
        }
    };
    private double randomShare = 0.5;

    private RetryLoop loop(RetryPolicy policy) {
        return new RetryLoop(policy, wallClock, () -> nanoTime, sleeper, () -> randomShare);
    }

    @Test
    void aConnectionDroppedAfterTheServerAnsweredIsRetriedUntilTheReplayArrives() {
        Attempts attempts = new Attempts(noAnswer(new EOFException("Unexpected end of file from server")),
                noAnswer(new SocketTimeoutException("Read timed out")), answer(201));

        RetryLoop.Final<FakeAnswer> done = loop(RetryPolicy.defaults()).run("POST /payments", "k-1", attempts);

        assertEquals(201, done.answer().status());
        assertEquals(3, done.attempts());
        assertEquals(3, attempts.sent);
        assertEquals(2, waits.size());
    }

    @ParameterizedTest
    @ValueSource(ints = {409, 429, 502, 503, 504})
    void answersWorthAnotherAttemptAreRetriedAndTheirResponsesFreed(int status) {
        FakeAnswer first = answer(status).get();
        Attempts attempts = new Attempts(() -> first, answer(200));

        RetryLoop.Final<FakeAnswer> done = loop(RetryPolicy.defaults()).run("POST /payments", "k", attempts);

        assertEquals(200, done.answer().status());
        assertEquals(2, attempts.sent);
        assertTrue(first.discarded, "the retried answer's connection is freed");
    }

    @ParameterizedTest
    @ValueSource(ints = {200, 201, 204, 400, 401, 403, 404, 413, 415, 500, 501, 505, 507, 511})
    void finalAnswersAreHandedBackAfterOneAttempt(int status) {
        Attempts attempts = new Attempts(answer(status), answer(200));

        RetryLoop.Final<FakeAnswer> done = loop(RetryPolicy.defaults()).run("POST /payments", "k", attempts);

        assertEquals(status, done.answer().status());
        assertEquals(1, attempts.sent);
        assertTrue(waits.isEmpty());
    }

    @Test
    void a500IsFinalByDefaultForTheServerReleasedTheKeyAndARetryWouldRunTheMethodAgain() {
        FakeAnswer failed = answer(500, Map.of(), "{\"title\":\"card charged, then the receipt failed\"}").get();
        Attempts attempts = new Attempts(() -> failed, answer(201));

        RetryLoop.Final<FakeAnswer> done = loop(RetryPolicy.defaults()).run("POST /payments", "k", attempts);

        assertEquals(1, attempts.sent, "the method that failed after its effect is not run again");
        assertSame(failed, done.answer(), "handed to the caller");
        assertFalse(failed.discarded);
    }

    @Test
    void idemkeysOwn503IsRetriedWhere503IsLeftOutButAnother503IsFinal() {
        RetryPolicy idemkeysOnly = RetryPolicy.defaults().withRetryStatuses(Set.of(409, 429, 502, 504));
        Attempts storeAway = new Attempts(answer(503, Map.of("Retry-After", "1"), PROBLEM_503), answer(201));
        Attempts proxy = new Attempts(answer(503, Map.of(), "<html><h1>503 Service Unavailable</h1></html>"), answer(201));
        Attempts application = new Attempts(answer(503, Map.of(), "{\"type\":\"https://acme.example/card-network-down\","
                + "\"status\":503}"), answer(201));

        assertEquals(201, loop(idemkeysOnly).run("POST /payments", "k1", storeAway).answer().status(), "the method did not run");
        assertEquals(2, storeAway.sent);
        assertEquals(503, loop(idemkeysOnly).run("POST /payments", "k2", proxy).answer().status());
        assertEquals(1, proxy.sent);
        assertEquals(503, loop(idemkeysOnly).run("POST /payments", "k3", application).answer().status());
        assertEquals(1, application.sent);
    }

    @Test
    void aStatusThePolicyListsIsRetriedAndOneItLeavesOutIsFinal() {
        RetryPolicy policy = RetryPolicy.defaults().withRetryStatuses(Set.of(500));
        Attempts listed = new Attempts(answer(500), answer(201));
        Attempts leftOut = new Attempts(answer(502), answer(201));

        assertEquals(201, loop(policy).run("POST /payments", "k1", listed).answer().status());
        assertEquals(2, listed.sent);
        assertEquals(502, loop(policy).run("POST /payments", "k2", leftOut).answer().status());
        assertEquals(1, leftOut.sent);
    }

    @Test
    void aReplayedAnswerIsFinalEvenA409TheApplicationGaveItself() {
        Attempts attempts = new Attempts(answer(409), answer(409, Map.of("Idempotent-Replayed", "true"), ""), answer(201));

        RetryLoop.Final<FakeAnswer> done = loop(RetryPolicy.defaults()).run("POST /orders", "k", attempts);

        assertEquals(409, done.answer().status(), "the recorded outcome of the key's first execution will not change");
        assertEquals(2, attempts.sent);
    }

    @Test
    void aTlsFailureIsNoMissingAnswerAndIsNotRetried() {
        ProcessingException untrusted = new ProcessingException(new javax.net.ssl.SSLHandshakeException("PKIX path building failed"));
        Attempts attempts = new Attempts(() -> {
            throw untrusted;
        });

        assertSame(untrusted, assertThrows(ProcessingException.class,
                () -> loop(RetryPolicy.defaults()).run("POST /payments", "k", attempts)));
        assertEquals(1, attempts.sent);
    }

    @Test
    void aConnectionResetUnderTlsIsAMissingAnswerAndIsRetried() {
        // the JDK's TLS socket reports a peer's reset after the request went out this way
        Attempts attempts = new Attempts(noAnswer(new javax.net.ssl.SSLException("Connection reset",
                new java.net.SocketException("Connection reset"))), answer(201));

        assertEquals(201, loop(RetryPolicy.defaults()).run("POST /payments", "k", attempts).answer().status());
        assertEquals(2, attempts.sent);
    }

    @Test
    void transportFailuresAreMissingAnswersButEncodingFailuresAndCertificatesAreNot() {
        assertTrue(RetryLoop.noAnswer(new ProcessingException(new java.io.IOException("Premature end of chunk coded message body"))));
        assertTrue(RetryLoop.noAnswer(new ProcessingException(new java.net.http.HttpTimeoutException("request timed out"))));
        assertTrue(RetryLoop.noAnswer(new ProcessingException(handshakeFailure("Remote host terminated the handshake",
                new EOFException("SSL peer shut down incorrectly")))), "the server never saw the request");
        assertFalse(RetryLoop.noAnswer(new ProcessingException(handshakeFailure("PKIX path building failed",
                new java.security.cert.CertificateException("unable to find valid certification path")))));
        assertFalse(RetryLoop.noAnswer(new ProcessingException(new java.nio.charset.MalformedInputException(1))),
                "an answer the client could not decode was an answer");
        assertFalse(RetryLoop.noAnswer(new ProcessingException("no MessageBodyReader for Receipt")));
    }

    @Test
    void aReusedKeyEndsTheCallWithTheServersProblem() {
        Attempts attempts = new Attempts(answer(422, Map.of(), PROBLEM_422), answer(200));

        KeyReusedException refused = assertThrows(KeyReusedException.class,
                () -> loop(RetryPolicy.defaults()).run("POST /payments", "k-7", attempts));

        assertEquals(1, attempts.sent);
        assertEquals("k-7", refused.key());
        assertEquals(422, refused.status().orElseThrow());
        assertEquals("another body", refused.problem().orElseThrow().detail());
        assertTrue(refused.getMessage().contains("k-7"), refused.getMessage());
    }

    @Test
    void aValidationFailureAnswered422IsNoKeyReuseAndIsHandedBack() {
        Attempts attempts = new Attempts(answer(422, Map.of(), "{\"title\":\"amount must be positive\"}"));

        assertEquals(422, loop(RetryPolicy.defaults()).run("POST /payments", "k", attempts).answer().status());
    }

    @Test
    void waitsAreARandomShareOfACeilingThatDoublesUpToTheMaximum() {
        RetryPolicy policy = RetryPolicy.defaults().withMaxAttempts(8).withBackoff(Duration.ofMillis(100), Duration.ofMillis(1000))
                .withMaxTotalTime(Duration.ofMinutes(1));
        randomShare = 0.999;
        loop(policy).run("POST /x", "k", new Attempts(noAnswers(7), answer(200)));
        assertEquals(List.of(99L, 199L, 399L, 799L, 999L, 999L, 999L), millis(waits));

        waits.clear();
        randomShare = 0.25;
        loop(policy).run("POST /x", "k", new Attempts(noAnswers(3), answer(200)));
        assertEquals(List.of(25L, 50L, 100L), millis(waits), "full jitter: anywhere from 0 to the ceiling");
    }

    @Test
    void retryAfterIsWaitedCappedAtTheMaximumBackoffPlusTheRandomShare() {
        randomShare = 0;
        String inThreeSeconds = DateTimeFormatter.RFC_1123_DATE_TIME.format(clock.instant().plusSeconds(3).atOffset(ZoneOffset.UTC));
        loop(RetryPolicy.defaults()).run("POST /x", "k", new Attempts(answer(409, Map.of("Retry-After", inThreeSeconds), ""),
                answer(503, Map.of("Retry-After", "2"), PROBLEM_503), answer(429, Map.of("Retry-After", "3600"), ""),
                answer(201)));

        assertEquals(List.of(3000L, 2000L, 5000L), millis(waits), "an HTTP date 3 s ahead; 2 s; an hour, capped at 5 s");

        waits.clear();
        randomShare = 0.5;
        loop(RetryPolicy.defaults()).run("POST /x", "k", new Attempts(answer(503, Map.of("Retry-After", "1"), ""),
                answer(503, Map.of("Retry-After", "1"), ""), answer(201)));
        assertEquals(List.of(1050L, 1100L), millis(waits), "callers told the same Retry-After do not all come back at once");
    }

    @Test
    void aRetryAfterTooLargeForMillisecondsIsCappedLikeAnyOtherAndItsAnswerFreed() {
        randomShare = 0;
        FakeAnswer absurd = answer(503, Map.of("Retry-After", "99999999999999999"), PROBLEM_503).get();
        Attempts attempts = new Attempts(() -> absurd, answer(201));

        RetryLoop.Final<FakeAnswer> done = loop(RetryPolicy.defaults()).run("POST /payments", "k", attempts);

        assertEquals(201, done.answer().status());
        assertEquals(List.of(5000L), millis(waits), "capped at the maximum backoff");
        assertTrue(absurd.discarded, "the retried answer's connection is freed");
    }

    @Test
    void anAnswerTheLoopFailsToReadIsFreedBeforeTheFailureLeavesTheCall() {
        IllegalArgumentException unreadable = new IllegalArgumentException("no HeaderDelegate for this header's type");
        FakeAnswer broken = new FakeAnswer(503, Map.of(), PROBLEM_503) {
            @Override
            public Optional<String> header(String name) {
                throw unreadable;
            }
        };

        assertSame(unreadable, assertThrows(IllegalArgumentException.class,
                () -> loop(RetryPolicy.defaults()).run("POST /payments", "k", new Attempts(() -> broken))));
        assertTrue(broken.discarded, "an answer not handed to the caller is freed, whatever ends the call");
    }

    @Test
    void afterTheLastAttemptTheCallGivesUpWithTheLastProblem() {
        Attempts attempts = new Attempts(() -> answer(503, Map.of("Retry-After", "1"), PROBLEM_503).get());

        RetriesExhaustedException gaveUp = assertThrows(RetriesExhaustedException.class,
                () -> loop(RetryPolicy.defaults()).run("POST /payments", "k-9", attempts));

        assertEquals(5, attempts.sent);
        assertEquals(5, gaveUp.attempts());
        assertEquals(503, gaveUp.status().orElseThrow());
        assertEquals("Redis is down", gaveUp.problem().orElseThrow().detail());
        assertEquals("k-9", gaveUp.key());
        assertTrue(gaveUp.getMessage().contains("gave up after 5 attempts"), gaveUp.getMessage());
    }

    @Test
    void noRetryStartsThatWouldWaitPastTheTotalTime() {
        randomShare = 0;
        RetryPolicy policy = RetryPolicy.defaults().withMaxAttempts(100).withMaxTotalTime(Duration.ofMillis(4500));
        Attempts attempts = new Attempts(() -> answer(503, Map.of("Retry-After", "1"), PROBLEM_503).get());

        RetriesExhaustedException gaveUp = assertThrows(RetriesExhaustedException.class,
                () -> loop(policy).run("POST /payments", "k", attempts));

        assertEquals(5, attempts.sent, "at 0, 1, 2, 3 and 4 s; the next would start at 5 s");
        assertEquals(Duration.ofSeconds(4), waits.stream().reduce(Duration.ZERO, Duration::plus));
        assertEquals(5, gaveUp.attempts());
    }

    @ParameterizedTest
    @ValueSource(longs = {-3600, 3600})
    void theTimeBudgetIsKeptOnAMonotonicClockThatAStepOfTheWallClockDoesNotMove(long stepSeconds) {
        randomShare = 0;
        wallClockStepAtFirstWait = Duration.ofSeconds(stepSeconds);
        RetryPolicy policy = RetryPolicy.defaults().withMaxAttempts(100).withMaxTotalTime(Duration.ofMillis(4500));
        Attempts attempts = new Attempts(() -> answer(503, Map.of("Retry-After", "1"), PROBLEM_503).get());

        RetriesExhaustedException gaveUp = assertThrows(RetriesExhaustedException.class,
                () -> loop(policy).run("POST /payments", "k", attempts));

        assertEquals(5, attempts.sent, "at 0, 1, 2, 3 and 4 s whatever the wall clock did after the first attempt");
        assertTrue(gaveUp.getMessage().contains("gave up after 5 attempts in 4000 ms"), gaveUp.getMessage());
    }

    @Test
    void theLastFailureWithoutAnAnswerIsTheCauseOfGivingUp() {
        ProcessingException refused = new ProcessingException(new ConnectException("Connection refused"));
        Attempts attempts = new Attempts(() -> {
            throw refused;
        });

        RetriesExhaustedException gaveUp = assertThrows(RetriesExhaustedException.class,
                () -> loop(RetryPolicy.defaults().withMaxAttempts(3)).run("POST /payments", "k", attempts));

        assertSame(refused, gaveUp.getCause());
        assertTrue(gaveUp.status().isEmpty());
        assertTrue(gaveUp.problem().isEmpty());
    }

    @Test
    void aClientFailureThatIsNoMissingAnswerIsNotRetried() {
        ProcessingException noWriter = new ProcessingException("no MessageBodyWriter for Payment");
        Attempts attempts = new Attempts(() -> {
            throw noWriter;
        });

        assertSame(noWriter, assertThrows(ProcessingException.class,
                () -> loop(RetryPolicy.defaults()).run("POST /payments", "k", attempts)));
        assertEquals(1, attempts.sent);
    }

    @Test
    void anInterruptedWaitEndsTheCallAndKeepsTheInterrupt() {
        RetryLoop interrupted = new RetryLoop(RetryPolicy.defaults(), clock, () -> nanoTime, d -> {
            throw new InterruptedException();
        }, () -> 0.5);

        RetriesExhaustedException gaveUp = assertThrows(RetriesExhaustedException.class,
                () -> interrupted.run("POST /payments", "k", new Attempts(answer(503), answer(200))));

        assertInstanceOf(InterruptedException.class, gaveUp.getCause());
        assertTrue(Thread.interrupted());
    }

    /** A wall clock that keeps time with a manual clock, and can be stepped forwards or backwards as NTP steps one. */
    private static final class SteppedClock extends Clock {
        private final Clock base;
        private Duration offset = Duration.ZERO;

        SteppedClock(Clock base) {
            this.base = base;
        }

        void step(Duration step) {
            offset = offset.plus(step);
        }

        @Override
        public Instant instant() {
            return base.instant().plus(offset);
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            throw new UnsupportedOperationException();
        }
    }

    private static javax.net.ssl.SSLHandshakeException handshakeFailure(String message, Exception cause) {
        javax.net.ssl.SSLHandshakeException failure = new javax.net.ssl.SSLHandshakeException(message);
        failure.initCause(cause);
        return failure;
    }

    private static List<Long> millis(List<Duration> durations) {
        return durations.stream().map(Duration::toMillis).toList();
    }

    private static Supplier<FakeAnswer> answer(int status) {
        return answer(status, Map.of(), "");
    }

    private static Supplier<FakeAnswer> answer(int status, Map<String, String> headers, String body) {
        return () -> new FakeAnswer(status, headers, body);
    }

    private static Supplier<FakeAnswer> noAnswer(Exception cause) {
        return () -> {
            throw new ProcessingException(cause);
        };
    }

    @SuppressWarnings("unchecked")
    private static Supplier<FakeAnswer>[] noAnswers(int count) {
        Supplier<FakeAnswer>[] all = new Supplier[count];
        for (int i = 0; i < count; i++) {
            all[i] = noAnswer(new ConnectException("Connection refused"));
        }
        return all;
    }

    /** Hands out the answers in turn; the last one again once they run out. */
    private static final class Attempts implements RetryLoop.Attempt<FakeAnswer> {
        private final Deque<Supplier<FakeAnswer>> answers = new ArrayDeque<>();
        private Supplier<FakeAnswer> last;
        int sent;

        @SafeVarargs
        Attempts(Supplier<FakeAnswer>... first) {
            answers.addAll(List.of(first));
        }

        Attempts(Supplier<FakeAnswer>[] first, Supplier<FakeAnswer> then) {
            answers.addAll(List.of(first));
            answers.add(then);
        }

        @Override
        public FakeAnswer send() {
            sent++;
            last = answers.isEmpty() ? last : answers.poll();
            return last.get();
        }
    }

    private static class FakeAnswer implements RetryLoop.Answer {
        private final int status;
        private final Map<String, String> headers;
        private final String body;
        boolean discarded;

        FakeAnswer(int status, Map<String, String> headers, String body) {
            this.status = status;
            this.headers = headers;
            this.body = body;
        }

        @Override
        public int status() {
            return status;
        }

        @Override
        public Optional<String> header(String name) {
            return Optional.ofNullable(headers.get(name));
        }

        @Override
        public Problem problem() {
            return Problem.parse(status, body);
        }

        @Override
        public void discard() {
            discarded = true;
        }
    }
}
