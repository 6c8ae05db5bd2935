package io.idemkey.client;

import io.idemkey.core.Sleeper;
import jakarta.ws.rs.ProcessingException;

import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLPeerUnverifiedException;
import java.io.EOFException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.net.http.HttpTimeoutException;
import java.nio.charset.CharacterCodingException;
import java.security.cert.CertificateException;
import java.time.Clock;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The retry loop both client forms share. Every attempt of one logical call carries the same key;
 * an attempt's answer is final, retried, or the end of the call:
 * <ul>
 * <li>no answer (connection refused or dropped, read timeout: an {@link IOException} of the
 *     transport under the client's {@link ProcessingException}, see {@link #noAnswer}), an answer
 *     whose status the policy retries ({@link RetryPolicy#retryStatuses()}: by default {@code 409},
 *     {@code 429}, {@code 502}, {@code 503}, {@code 504}), and Idemkey's own {@code 503}
 *     ({@code store-unavailable}) in any case: retried after a wait, within the policy's
 *     attempts and time;</li>
 * <li>{@code 422} of type {@code key-reused}: {@link KeyReusedException};</li>
 * <li>a replay ({@code Idempotent-Replayed: true}): final, whatever its status (the first execution's outcome);</li>
 * <li>anything else (a success, {@code 400}, {@code 404}, another {@code 4xx}, {@code 500} and the
 *     other {@code 5xx} by default): final, handed to the caller.</li>
 * </ul>
 */
final class RetryLoop {

    private static final Logger LOG = Logger.getLogger(RetryLoop.class.getName());

    /** One attempt's answer, as the loop needs to see it. */
    interface Answer {

        int status();

        Optional<String> header(String name);

        /** The answer's body as a problem (buffered: it can be read again, by the caller too). */
        Problem problem();

        /** Frees what the answer holds (its connection); it is not handed to the caller. Harmless when called again. */
        void discard();
    }

    /** The final answer of a call and the attempts it took. */
    record Final<A extends Answer>(A answer, int attempts) {
    }

    /** Sends one attempt; a {@link ProcessingException} caused by an {@link IOException} is "no answer". */
    @FunctionalInterface
    interface Attempt<A extends Answer> {
        A send();
    }

    private final RetryPolicy policy;
    private final Clock clock;
    private final LongSupplier nanoTime;
    private final Sleeper sleeper;
    private final DoubleSupplier random;

    /** On the system's clocks, sleeping the thread, with its own random shares. */
    static RetryLoop of(RetryPolicy policy) {
        return new RetryLoop(policy, Clock.systemUTC(), System::nanoTime, Sleeper.THREAD,
                () -> ThreadLocalRandom.current().nextDouble());
    }

    /**
     * @param clock    the wall clock, for a {@code Retry-After} given as an HTTP date
     * @param nanoTime a monotonic clock in nanoseconds ({@link System#nanoTime()}), for the call's time budget:
     *                 a step of the wall clock (NTP, a resumed virtual machine) neither ends a call early nor
     *                 stretches it
     */
    RetryLoop(RetryPolicy policy, Clock clock, LongSupplier nanoTime, Sleeper sleeper, DoubleSupplier random) {
        this.policy = policy;
        this.clock = clock;
        this.nanoTime = nanoTime;
        this.sleeper = sleeper;
        this.random = random;
    }

    RetryPolicy policy() {
        return policy;
    }

    /**
     * Runs the attempts of one call.
     *
     * @param call for messages: {@code POST http://host/payments}
     * @return the final answer and the attempts it took
     * @throws KeyReusedException        the server refused the key as used with another request
     * @throws RetriesExhaustedException attempts or time ran out (cause: the last failure, if the last attempt had no answer)
     * @throws RuntimeException          an attempt failed other than by getting no answer: as it failed
     */
    <A extends Answer> Final<A> run(String call, String key, Attempt<A> attempt) {
        long started = nanoTime.getAsLong();
        for (int number = 1; ; number++) {
            A answer = null;
            ProcessingException failure = null;
            try {
                answer = attempt.send();
            } catch (ProcessingException e) {
                if (!noAnswer(e)) {
                    throw e;
                }
                failure = e;
            }
            try {
                Optional<Duration> retryAfter = Optional.empty();
                if (answer != null) {
                    int status = answer.status();
                    if (status == 422) {
                        Problem problem = answer.problem();
                        if (problem.keyReused()) {
                            throw new KeyReusedException(call, key, number, problem);
                        }
                        return new Final<>(answer, number);
                    }
                    if (!retried(answer, status) || replay(answer)) {
                        return new Final<>(answer, number); // a replayed answer is the operation's recorded outcome: final
                    }
                    retryAfter = answer.header("Retry-After").flatMap(value -> retryAfter(value, clock));
                }
                Duration wait = delay(number, retryAfter);
                long elapsed = millisSince(started);
                if (number >= policy.maxAttempts() || elapsed + wait.toMillis() > policy.maxTotalTime().toMillis()) {
                    throw exhausted(call, key, number, elapsed, answer, failure, null);
                }
                String last = answer == null ? "no answer (" + failure.getMessage() + ")" : "status " + answer.status();
                int attemptNumber = number;
                LOG.log(Level.FINE, () -> "Idemkey client: " + call + " attempt " + attemptNumber + " got " + last
                        + "; retrying with key " + key + " in " + wait.toMillis() + " ms");
                if (answer != null) {
                    answer.discard();
                    answer = null;
                }
                try {
                    sleeper.sleep(wait);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw exhausted(call, key, number, millisSince(started), null, failure, e);
                }
            } catch (RuntimeException | Error ending) {
                if (answer != null) {
                    answer.discard(); // whatever ends the call, an answer not handed to the caller frees its connection
                }
                throw ending;
            }
        }
    }

    private long millisSince(long startedNanos) {
        return Duration.ofNanos(nanoTime.getAsLong() - startedNanos).toMillis();
    }

    /**
     * Whether an answer is worth another attempt with the same key: its status is one the policy
     * retries, or it is Idemkey's own {@code 503}, which says the method did not run. (Any other
     * {@code 5xx} released the key on Idemkey's server: a retry would run the method again.)
     */
    private boolean retried(Answer answer, int status) {
        return policy.retryStatuses().contains(status) || status == 503 && answer.problem().storeUnavailable();
    }

    /** The server's recorded answer to the key's first execution (a 409 the application gave, say): it will not change. */
    private static boolean replay(Answer answer) {
        return answer.header(IdempotentRequests.REPLAYED_HEADER).filter("true"::equalsIgnoreCase).isPresent();
    }

    /**
     * A failure with no answer: the connection was refused, dropped or timed out, TLS or not (a
     * socket-level failure anywhere below), or another {@link IOException} of the transport. Not
     * one: the server's certificate refused (it will not fix itself), an entity the client could
     * not encode or decode (a {@link CharacterCodingException}, a Jackson processing error).
     */
    static boolean noAnswer(Throwable failure) {
        boolean io = false;
        boolean refused = false;
        for (Throwable cause = failure; cause != null; cause = cause.getCause() == cause ? null : cause.getCause()) {
            if (cause instanceof SocketException || cause instanceof EOFException || cause instanceof InterruptedIOException
                    || cause instanceof UnknownHostException || cause instanceof HttpTimeoutException) {
                return true; // the transport failed, under TLS too ("Connection reset" in an SSLException)
            }
            refused |= cause instanceof SSLHandshakeException || cause instanceof SSLPeerUnverifiedException
                    || cause instanceof CertificateException || cause instanceof CharacterCodingException
                    || isJacksonProcessingError(cause);
            io |= cause instanceof IOException;
        }
        return io && !refused;
    }

    /** Jackson's (de)serialization failures are IOExceptions; they say nothing about the connection. */
    private static boolean isJacksonProcessingError(Throwable failure) {
        for (Class<?> type = failure.getClass(); type != null; type = type.getSuperclass()) {
            if (type.getName().equals("com.fasterxml.jackson.core.JacksonException")
                    || type.getName().equals("com.fasterxml.jackson.core.JsonProcessingException")) {
                return true;
            }
        }
        return false;
    }

    /**
     * The wait before the next attempt: a uniformly random share of the backoff ceiling
     * {@code min(maxBackoff, initialBackoff × 2^(attempts - 1))}, after the server's {@code Retry-After}
     * (capped at {@code maxBackoff}) when it gave one.
     */
    Duration delay(int attemptsMade, Optional<Duration> retryAfter) {
        long initial = policy.initialBackoff().toMillis();
        long max = policy.maxBackoff().toMillis();
        long ceiling = attemptsMade > 30 ? max : Math.min(max, initial << (attemptsMade - 1));
        long jitter = (long) (random.getAsDouble() * ceiling);
        // capped before it is counted in milliseconds: a Retry-After of 10^17 s has no millisecond count
        Duration floor = retryAfter.map(r -> r.compareTo(policy.maxBackoff()) > 0 ? policy.maxBackoff() : r).orElse(Duration.ZERO);
        return floor.plusMillis(jitter);
    }

    /** {@code Retry-After}: delta-seconds or an HTTP date; empty when it is neither (never throws). */
    static Optional<Duration> retryAfter(String value, Clock clock) {
        String v = value.trim();
        try {
            long seconds = Long.parseLong(v);
            return seconds < 0 ? Optional.empty() : Optional.of(Duration.ofSeconds(seconds));
        } catch (NumberFormatException notSeconds) {
            try {
                Duration until = Duration.between(clock.instant(), ZonedDateTime.parse(v, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant());
                return Optional.of(until.isNegative() ? Duration.ZERO : until);
            } catch (DateTimeParseException neither) {
                return Optional.empty();
            }
        }
    }

    /** The end of a call that ran out of attempts or time (the loop frees the last answer as this leaves it). */
    private RetriesExhaustedException exhausted(String call, String key, int attempts, long elapsedMillis, Answer answer,
                                                ProcessingException failure, InterruptedException interrupted) {
        Problem problem = answer == null ? null : answer.problem();
        int status = answer == null ? 0 : answer.status();
        String last = interrupted != null ? "interrupted while waiting to retry"
                : answer != null ? "the last answer was " + problem
                : "the last attempt got no answer: " + failure.getMessage();
        return new RetriesExhaustedException(call + ": gave up after " + attempts + (attempts == 1 ? " attempt" : " attempts")
                + " in " + elapsedMillis + " ms with the key " + key + " (retrying later with that key is safe): " + last,
                key, attempts, status, problem, interrupted != null ? interrupted : failure);
    }
}
