package io.idemkey.client;

import io.idemkey.config.ConfigLookup;
import io.idemkey.core.Sleeper;
import jakarta.ws.rs.client.WebTarget;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.config.ConfigProvider;

import java.time.Clock;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.DoubleSupplier;

/**
 * Retrying requests for the JAX-RS Client API, safe by construction: each {@link IdempotentRequest}
 * is one logical operation with one {@code Idempotency-Key}, kept across all its attempts.
 *
 * <pre>
 * IdempotentRequests requests = IdempotentRequests.create();   // policy: idempotency.client.* from MP Config
 * Response response = requests.to(client.target(base).path("payments"))
 *         .accept(MediaType.APPLICATION_JSON)
 *         .post(Entity.json(payment));                          // retried as RetryPolicy says
 * boolean replayed = IdempotentRequests.replayed(response);
 * </pre>
 *
 * Thread-safe; share one per application. It rides on the caller's {@link jakarta.ws.rs.client.Client}
 * (its connection and read timeouts bound each attempt).
 */
public final class IdempotentRequests {

    /** The request header carrying the key. */
    public static final String KEY_HEADER = "Idempotency-Key";
    /** The response header marking a replayed first response. */
    public static final String REPLAYED_HEADER = "Idempotent-Replayed";

    private final RetryPolicy policy;
    private final Clock clock;
    private final Sleeper sleeper;
    private final DoubleSupplier random;

    private IdempotentRequests(RetryPolicy policy, Clock clock, Sleeper sleeper, DoubleSupplier random) {
        this.policy = Objects.requireNonNull(policy, "policy");
        this.clock = clock;
        this.sleeper = sleeper;
        this.random = random;
    }

    /** With the global policy from MicroProfile Config ({@code idempotency.client.*}) where there is one, else the defaults. */
    public static IdempotentRequests create() {
        RetryPolicy policy;
        try {
            var config = ConfigProvider.getConfig();
            policy = RetryPolicy.from(name -> config.getOptionalValue(name, String.class).filter(v -> !v.isBlank()));
        } catch (LinkageError | IllegalStateException noConfig) {
            policy = RetryPolicy.defaults();
        }
        return create(policy);
    }

    public static IdempotentRequests create(RetryPolicy policy) {
        return new IdempotentRequests(policy, Clock.systemUTC(), Sleeper.THREAD, () -> ThreadLocalRandom.current().nextDouble());
    }

    /** For tests: time, waiting and randomness of one's own. */
    static IdempotentRequests create(RetryPolicy policy, Clock clock, Sleeper sleeper, DoubleSupplier random) {
        return new IdempotentRequests(policy, clock, sleeper, random);
    }

    /** With the policy from these settings ({@code idempotency.client.*}), for callers that read their own configuration. */
    public static IdempotentRequests create(ConfigLookup config) {
        return create(RetryPolicy.from(config));
    }

    public RetryPolicy policy() {
        return policy;
    }

    /** One logical operation on this target, with a new key (unless {@link IdempotentRequest#key(String)} gives one). */
    public IdempotentRequest to(WebTarget target) {
        return new IdempotentRequest(target, new RetryLoop(policy, clock, sleeper, random));
    }

    /** Whether the response is a replay of the operation's first response ({@code Idempotent-Replayed: true}). */
    public static boolean replayed(Response response) {
        return "true".equalsIgnoreCase(response.getHeaderString(REPLAYED_HEADER));
    }
}
