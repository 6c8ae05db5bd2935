package io.idemkey.client;

import io.idemkey.config.ConfigLookup;
import jakarta.ws.rs.client.WebTarget;
import jakarta.ws.rs.core.Response;

import java.util.Objects;

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

    /** Stateless: one loop serves every request. */
    private final RetryLoop loop;

    private IdempotentRequests(RetryPolicy policy) {
        this.loop = RetryLoop.of(Objects.requireNonNull(policy, "policy"));
    }

    /**
     * With the global policy from MicroProfile Config ({@code idempotency.client.*}) where there is one, else the defaults.
     *
     * @return requests retried as the global {@code idempotency.client.*} properties say
     */
    public static IdempotentRequests create() {
        RetryPolicy policy;
        try {
            policy = RetryPolicy.from(ConfigLookup.microProfile());
        } catch (LinkageError | IllegalStateException noConfig) {
            policy = RetryPolicy.defaults();
        }
        return create(policy);
    }

    /**
     * Requests retried as {@code policy} says.
     *
     * @param policy the retry policy
     * @return the requests
     */
    public static IdempotentRequests create(RetryPolicy policy) {
        return new IdempotentRequests(policy);
    }

    /**
     * The retry policy.
     *
     * @return the policy these requests follow
     */
    public RetryPolicy policy() {
        return loop.policy();
    }

    /**
     * One logical operation on this target, with a new key (unless {@link IdempotentRequest#key(String)} gives one).
     *
     * @param target where the operation goes
     * @return a new operation with a new key
     */
    public IdempotentRequest to(WebTarget target) {
        return new IdempotentRequest(target, loop);
    }

    /** The header value of a key: an RFC 8941 String, as the IETF draft has it. */
    static String headerValue(String key) {
        return '"' + key + '"';
    }

    /**
     * Whether the response is a replay of the operation's first response ({@code Idempotent-Replayed: true}).
     *
     * @param response an answer
     * @return whether it is a replay ({@code Idempotency-Replayed: true})
     */
    public static boolean replayed(Response response) {
        return "true".equalsIgnoreCase(response.getHeaderString(REPLAYED_HEADER));
    }
}
