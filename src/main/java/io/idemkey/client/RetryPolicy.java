package io.idemkey.client;

import io.idemkey.config.ConfigLookup;
import io.idemkey.config.ConfigurationException;
import io.idemkey.config.Values;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * How a client retries one logical call: at most {@code maxAttempts} attempts (the first included)
 * within {@code maxTotalTime}; before attempt <i>n</i> + 1 it waits a random time between 0 and
 * {@code min(maxBackoff, initialBackoff × 2^(n-1))} ("full jitter", so that callers cut off together
 * do not come back together), or, when the server said {@code Retry-After}, that long (capped at
 * {@code maxBackoff}) plus the same random share.
 *
 * <p>Which answers are retried ({@code retryStatuses}) matters for the {@code 5xx}: Idemkey's server
 * releases the key of a method that answered {@code 5xx} or threw, so a retry runs the method again.
 * By default the client retries only what says the method did not run or lets the record decide:
 * <ul>
 * <li>{@code 409} (in progress) and {@code 429}: a {@code 4xx} the method answered is recorded, so a
 *     retry gets its replay, never a second run;</li>
 * <li>{@code 502} and {@code 504}, a gateway's answers: it got no (valid) answer from the server in
 *     time; the method did not run (a retry runs it, once), runs still (a retry gets {@code 409}, then
 *     the replay) or has run (the replay), like an answer lost on the way, which is retried too;</li>
 * <li>{@code 503}: "unable to handle the request" (RFC 9110), what a proxy with no server to send to,
 *     a server shedding load and Idemkey with its store away answer; an application that answers
 *     {@code 503} after its method had effects gets them again (leave {@code 503} out);</li>
 * <li>never {@code 500} (nor another {@code 5xx}): the method may have had effects before it failed.</li>
 * </ul>
 * Idemkey's own {@code 503} (type {@link Problem#STORE_UNAVAILABLE}: the method did not run) is
 * retried even when {@code 503} is left out; a {@code 422} of type {@code key-reused} and a replay
 * always end the call.
 *
 * <p>From MicroProfile Config, most specific first (like the server's overrides):
 * <pre>
 * com.acme.PaymentsApi/charge/idempotency.client.max-attempts=8
 * com.acme.PaymentsApi/idempotency.client.max-attempts=8
 * idempotency.client.max-attempts=8
 * </pre>
 * and the same for {@code initial-backoff-ms}, {@code max-backoff-ms}, {@code max-total-ms} and
 * {@code retry-statuses} (the most specific list replaces the others, it does not add to them).
 *
 * @param maxAttempts    attempts in all, the first included (1 to 100; default 5)
 * @param initialBackoff the ceiling of the first wait (1 ms to 1 min; default 100 ms)
 * @param maxBackoff     the largest ceiling of a wait, and the cap on a {@code Retry-After}
 *                       (at least {@code initialBackoff}, at most 10 min; default 5 s)
 * @param maxTotalTime   no retry starts after this time since the call began (1 ms to 1 h; default 30 s)
 * @param retryStatuses  the statuses of the answers retried (each from 400 to 599, at least one;
 *                       default {@code 409, 429, 502, 503, 504})
 */
public record RetryPolicy(int maxAttempts, Duration initialBackoff, Duration maxBackoff, Duration maxTotalTime,
                          Set<Integer> retryStatuses) {

    /**
     * The property of {@link #maxAttempts()}.
     */
    public static final String MAX_ATTEMPTS = "idempotency.client.max-attempts";
    /**
     * The property of {@link #initialBackoff()}, in milliseconds.
     */
    public static final String INITIAL_BACKOFF = "idempotency.client.initial-backoff-ms";
    /**
     * The property of {@link #maxBackoff()}, in milliseconds.
     */
    public static final String MAX_BACKOFF = "idempotency.client.max-backoff-ms";
    /**
     * The property of {@link #maxTotalTime()}, in milliseconds.
     */
    public static final String MAX_TOTAL = "idempotency.client.max-total-ms";
    /**
     * The property of {@link #retryStatuses()}: statuses separated by commas.
     */
    public static final String RETRY_STATUSES = "idempotency.client.retry-statuses";

    /** In progress, too many requests, and the answers of a gateway or a server that did not handle the request. */
    private static final Set<Integer> DEFAULT_RETRY_STATUSES = Set.of(409, 429, 502, 503, 504);

    private static final RetryPolicy DEFAULTS =
            new RetryPolicy(5, Duration.ofMillis(100), Duration.ofSeconds(5), Duration.ofSeconds(30));

    /**
     * Checks every component's range.
     *
     * @param maxAttempts attempts, the first included
     * @param initialBackoff the first wait's upper bound
     * @param maxBackoff the largest wait
     * @param maxTotalTime the whole call's time
     * @param retryStatuses the statuses of the answers retried
     * @throws io.idemkey.config.ConfigurationException naming the property of a value out of range
     */
    public RetryPolicy {
        Objects.requireNonNull(initialBackoff, "initialBackoff");
        Objects.requireNonNull(maxBackoff, "maxBackoff");
        Objects.requireNonNull(maxTotalTime, "maxTotalTime");
        check(MAX_ATTEMPTS, maxAttempts, 1, 100);
        check(INITIAL_BACKOFF, initialBackoff.toMillis(), 1, 60_000);
        check(MAX_BACKOFF, maxBackoff.toMillis(), initialBackoff.toMillis(), 600_000);
        check(MAX_TOTAL, maxTotalTime.toMillis(), 1, 3_600_000);
        retryStatuses = checkedStatuses(RETRY_STATUSES, retryStatuses);
    }

    /**
     * With the default retried statuses.
     *
     * @param maxAttempts attempts, the first included (1 to 100)
     * @param initialBackoff the first wait's upper bound (1 ms to 60 s)
     * @param maxBackoff the largest wait (up to 600 s, not below initialBackoff)
     * @param maxTotalTime the whole call's time (1 ms to 1 h)
     */
    public RetryPolicy(int maxAttempts, Duration initialBackoff, Duration maxBackoff, Duration maxTotalTime) {
        this(maxAttempts, initialBackoff, maxBackoff, maxTotalTime, DEFAULT_RETRY_STATUSES);
    }

    /**
     * 5 attempts, waits from 100 ms up to 5 s, 30 s in all; retries 409, 429, 502, 503 and 504.
     *
     * @return the default policy
     */
    public static RetryPolicy defaults() {
        return DEFAULTS;
    }

    /**
     * A copy with another number of attempts.
     *
     * @param attempts attempts, the first included (1 to 100)
     * @return the copy
     */
    public RetryPolicy withMaxAttempts(int attempts) {
        return new RetryPolicy(attempts, initialBackoff, maxBackoff, maxTotalTime, retryStatuses);
    }

    /**
     * A copy with other waits.
     *
     * @param initial the first wait's upper bound
     * @param max the largest wait
     * @return the copy
     */
    public RetryPolicy withBackoff(Duration initial, Duration max) {
        return new RetryPolicy(maxAttempts, initial, max, maxTotalTime, retryStatuses);
    }

    /**
     * A copy with another time for the whole call.
     *
     * @param total the whole call's time
     * @return the copy
     */
    public RetryPolicy withMaxTotalTime(Duration total) {
        return new RetryPolicy(maxAttempts, initialBackoff, maxBackoff, total, retryStatuses);
    }

    /**
     * Retries the answers with these statuses (instead of 409, 429, 502, 503 and 504).
     *
     * @param statuses statuses from 400 to 599, at least one
     * @return a copy retrying those
     */
    public RetryPolicy withRetryStatuses(Set<Integer> statuses) {
        return new RetryPolicy(maxAttempts, initialBackoff, maxBackoff, maxTotalTime, statuses);
    }

    /**
     * The global policy: {@code idempotency.client.*}, defaults for what is not set. Internal: for
     * the client runtime (it takes an internal type); may change in any release.
     *
     * @param config the configuration
     * @return the policy
     */
    public static RetryPolicy from(ConfigLookup config) {
        return resolve(config, List.of(""));
    }

    /**
     * The policy of one method of a client interface: {@code <interface>/<method>/idempotency.client.*},
     * then {@code <interface>/idempotency.client.*}, then the global properties. Internal: for the
     * client runtime (it takes an internal type); may change in any release.
     *
     * @param config the configuration
     * @param api the client interface
     * @param method its method
     * @return the policy
     * @throws ConfigurationException naming the property whose value is invalid
     */
    public static RetryPolicy from(ConfigLookup config, Class<?> api, Method method) {
        return resolve(config, List.of(api.getName() + "/" + method.getName() + "/", api.getName() + "/", ""));
    }

    private static RetryPolicy resolve(ConfigLookup config, List<String> prefixes) {
        int attempts = integer(config, prefixes, MAX_ATTEMPTS, DEFAULTS.maxAttempts, 1, 100);
        int initial = integer(config, prefixes, INITIAL_BACKOFF, (int) DEFAULTS.initialBackoff.toMillis(), 1, 60_000);
        int max = integer(config, prefixes, MAX_BACKOFF, Math.max(initial, (int) DEFAULTS.maxBackoff.toMillis()),
                initial, 600_000);
        int total = integer(config, prefixes, MAX_TOTAL, (int) DEFAULTS.maxTotalTime.toMillis(), 1, 3_600_000);
        Set<Integer> statuses = statuses(config, prefixes);
        return new RetryPolicy(attempts, Duration.ofMillis(initial), Duration.ofMillis(max), Duration.ofMillis(total), statuses);
    }

    /** The most specific list set (whole: lists are not merged), checked under the name it was set with. */
    private static Set<Integer> statuses(ConfigLookup config, List<String> prefixes) {
        for (String prefix : prefixes) {
            Optional<String> value = config.get(prefix + RETRY_STATUSES);
            if (value.isPresent()) {
                Set<Integer> statuses = new TreeSet<>();
                for (String status : value.get().split(",", -1)) {
                    try {
                        statuses.add(Integer.parseInt(status.trim()));
                    } catch (NumberFormatException e) {
                        throw new ConfigurationException(prefix + RETRY_STATUSES, "must list HTTP statuses from 400 to 599"
                                + " separated by commas, not '" + value.get() + "'");
                    }
                }
                return checkedStatuses(prefix + RETRY_STATUSES, statuses);
            }
        }
        return DEFAULTS.retryStatuses;
    }

    /** The statuses, checked, in order and unmodifiable. */
    private static Set<Integer> checkedStatuses(String property, Set<Integer> statuses) {
        Objects.requireNonNull(statuses, "retryStatuses");
        if (statuses.isEmpty()) {
            throw new ConfigurationException(property, "must list at least one HTTP status");
        }
        for (int status : statuses) {
            if (status < 400 || status > 599) {
                throw new ConfigurationException(property, "must list HTTP statuses from 400 to 599, not " + status);
            }
        }
        return Collections.unmodifiableSortedSet(new TreeSet<>(statuses));
    }

    /** The most specific value set, checked under the name it was set with. */
    private static int integer(ConfigLookup config, List<String> prefixes, String name, int otherwise, int min, int max) {
        for (String prefix : prefixes) {
            Optional<String> value = config.get(prefix + name);
            if (value.isPresent()) {
                return Values.integer(prefix + name, value.get(), min, max);
            }
        }
        return otherwise;
    }

    private static void check(String property, long value, long min, long max) {
        if (value < min || value > max) {
            throw new ConfigurationException(property, "must be between " + min + " and " + max + ", not " + value);
        }
    }
}
