package io.idemkey.client;

import io.idemkey.config.ConfigLookup;
import io.idemkey.config.ConfigurationException;
import io.idemkey.config.Values;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * How a client retries one logical call: at most {@code maxAttempts} attempts (the first included)
 * within {@code maxTotalTime}; before attempt <i>n</i> + 1 it waits a random time between 0 and
 * {@code min(maxBackoff, initialBackoff × 2^(n-1))} ("full jitter", so that callers cut off together
 * do not come back together), or, when the server said {@code Retry-After}, that long (capped at
 * {@code maxBackoff}) plus the same random share.
 *
 * <p>From MicroProfile Config, most specific first (like the server's overrides):
 * <pre>
 * com.acme.PaymentsApi/charge/idempotency.client.max-attempts=8
 * com.acme.PaymentsApi/idempotency.client.max-attempts=8
 * idempotency.client.max-attempts=8
 * </pre>
 * and the same for {@code initial-backoff-ms}, {@code max-backoff-ms} and {@code max-total-ms}.
 *
 * @param maxAttempts    attempts in all, the first included (1 to 100; default 5)
 * @param initialBackoff the ceiling of the first wait (1 ms to 1 min; default 100 ms)
 * @param maxBackoff     the largest ceiling of a wait, and the cap on a {@code Retry-After}
 *                       (at least {@code initialBackoff}, at most 10 min; default 5 s)
 * @param maxTotalTime   no retry starts after this time since the call began (1 ms to 1 h; default 30 s)
 */
public record RetryPolicy(int maxAttempts, Duration initialBackoff, Duration maxBackoff, Duration maxTotalTime) {

    public static final String MAX_ATTEMPTS = "idempotency.client.max-attempts";
    public static final String INITIAL_BACKOFF = "idempotency.client.initial-backoff-ms";
    public static final String MAX_BACKOFF = "idempotency.client.max-backoff-ms";
    public static final String MAX_TOTAL = "idempotency.client.max-total-ms";

    private static final RetryPolicy DEFAULTS =
            new RetryPolicy(5, Duration.ofMillis(100), Duration.ofSeconds(5), Duration.ofSeconds(30));

    public RetryPolicy {
        Objects.requireNonNull(initialBackoff, "initialBackoff");
        Objects.requireNonNull(maxBackoff, "maxBackoff");
        Objects.requireNonNull(maxTotalTime, "maxTotalTime");
        check(MAX_ATTEMPTS, maxAttempts, 1, 100);
        check(INITIAL_BACKOFF, initialBackoff.toMillis(), 1, 60_000);
        check(MAX_BACKOFF, maxBackoff.toMillis(), initialBackoff.toMillis(), 600_000);
        check(MAX_TOTAL, maxTotalTime.toMillis(), 1, 3_600_000);
    }

    /** 5 attempts, waits from 100 ms up to 5 s, 30 s in all. */
    public static RetryPolicy defaults() {
        return DEFAULTS;
    }

    public RetryPolicy withMaxAttempts(int attempts) {
        return new RetryPolicy(attempts, initialBackoff, maxBackoff, maxTotalTime);
    }

    public RetryPolicy withBackoff(Duration initial, Duration max) {
        return new RetryPolicy(maxAttempts, initial, max, maxTotalTime);
    }

    public RetryPolicy withMaxTotalTime(Duration total) {
        return new RetryPolicy(maxAttempts, initialBackoff, maxBackoff, total);
    }

    /** The global policy: {@code idempotency.client.*}, defaults for what is not set. */
    public static RetryPolicy from(ConfigLookup config) {
        return resolve(config, List.of(""));
    }

    /**
     * The policy of one method of a client interface: {@code <interface>/<method>/idempotency.client.*},
     * then {@code <interface>/idempotency.client.*}, then the global properties.
     *
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
        return new RetryPolicy(attempts, Duration.ofMillis(initial), Duration.ofMillis(max), Duration.ofMillis(total));
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
