package io.idemkey;

import java.lang.reflect.Type;
import java.time.Duration;

/**
 * Idempotent calls in code, for work that is no annotated method (a lambda, a branch of a message
 * listener): inject it and name the scope.
 * <pre>
 * &#64;Inject Idempotency idempotency;
 *
 * Receipt receipt = idempotency.scope("payments")
 *         .lockTtl(Duration.ofSeconds(60))
 *         .arguments(payment)
 *         .call(paymentId, Receipt.class, () -&gt; gateway.charge(payment));
 * idempotency.scope("ledger").run(messageId, () -&gt; ledger.apply(entry));
 * </pre>
 * The semantics are {@link Idempotent}'s: the first call runs and its result is recorded, later calls
 * with the key get it back without running, and the same {@link IdempotencyException}s. For a generic
 * result, pass its {@link Type} ({@code new ArrayList<Receipt>(){}.getClass().getGenericSuperclass()},
 * or a field's generic type).
 */
public interface Idempotency {

    /**
     * Calls in this scope: records are shared only within one scope (a tenant, a consumer group, an
     * operation). Defaults: 24 h TTL, 30 s lock TTL, no recorded exceptions, no arguments fingerprinted,
     * the global failure mode.
     */
    Call scope(String scope);

    /** One way of calling, immutable: each setter returns a new one. */
    interface Call {

        /** How long a completed call's outcome is returned to later calls (default 24 h). */
        Call ttl(Duration ttl);

        /** How long an in-progress record survives without its owner (default 30 s; renewed while running). */
        Call lockTtl(Duration lockTtl);

        /** How long a call that meets a running first call waits for it (default 0: throw at once). */
        Call inFlightWait(Duration wait);

        /** Exceptions that are recorded outcomes, re-thrown (same class and message) to later calls. */
        @SuppressWarnings("unchecked")
        Call recording(Class<? extends Exception>... exceptions);

        /**
         * The arguments that must be the same for every call with one key (fingerprinted as JSON-B,
         * these member names left out): a key reused with others throws
         * {@link IdempotencyException.KeyReused}.
         */
        Call arguments(Object... arguments);

        /** JSON member names left out of the arguments' fingerprint. */
        Call excludeFields(String... fieldNames);

        /** Whether the work runs unprotected when the store cannot be reached (default: the global failure mode). */
        Call failOpen(boolean failOpen);

        /** Runs {@code work} at most once per key; later calls get its result, read back as {@code type}. */
        <T, E extends Exception> T call(String key, Class<T> type, Work<T, E> work) throws E;

        /** The same for a generic result type. */
        <T, E extends Exception> T call(String key, Type type, Work<T, E> work) throws E;

        /** Runs {@code work} at most once per key. */
        <E extends Exception> void run(String key, VoidWork<E> work) throws E;
    }

    /** Work with a result. */
    @FunctionalInterface
    interface Work<T, E extends Exception> {
        T get() throws E;
    }

    /** Work without a result. */
    @FunctionalInterface
    interface VoidWork<E extends Exception> {
        void run() throws E;
    }
}
