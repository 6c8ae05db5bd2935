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
     *
     * @param scope the scope's name, part of every record key made in it; not blank
     * @return the calls in that scope, with the defaults
     */
    Call scope(String scope);

    /** One way of calling, immutable: each setter returns a new one. */
    interface Call {

        /**
         * How long a completed call's outcome is returned to later calls (default 24 h).
         *
         * @param ttl a positive duration
         * @return a copy with this TTL
         */
        Call ttl(Duration ttl);

        /**
         * How long an in-progress record survives without its owner (default 30 s; renewed while running).
         *
         * @param lockTtl a positive duration
         * @return a copy with this lock TTL
         */
        Call lockTtl(Duration lockTtl);

        /**
         * How long a call that meets a running first call waits for it (default 0: throw at once).
         *
         * @param wait zero or a positive duration
         * @return a copy with this wait
         */
        Call inFlightWait(Duration wait);

        /**
         * Exceptions that are recorded outcomes, re-thrown (same class and message) to later calls.
         *
         * @param exceptions the exception classes (and their subclasses) to record
         * @return a copy that records them
         */
        @SuppressWarnings("unchecked")
        Call recording(Class<? extends Exception>... exceptions);

        /**
         * The arguments that must be the same for every call with one key (fingerprinted as JSON-B,
         * these member names left out): a key reused with others throws
         * {@link IdempotencyException.KeyReused}.
         *
         * @param arguments the call's arguments, each serializable with JSON-B
         * @return a copy that fingerprints them
         */
        Call arguments(Object... arguments);

        /**
         * JSON member names left out of the arguments' fingerprint.
         *
         * @param fieldNames member names, at any depth
         * @return a copy that leaves them out
         */
        Call excludeFields(String... fieldNames);

        /**
         * Whether the work runs unprotected when the store cannot be reached (default: the global failure mode).
         *
         * @param failOpen {@code true}: run unprotected; {@code false}: throw {@link IdempotencyException.Unavailable}
         * @return a copy with this failure mode
         */
        Call failOpen(boolean failOpen);

        /**
         * Runs {@code work} at most once per key; later calls get its result, read back as {@code type}.
         *
         * @param <T> the result's type
         * @param <E> the exception the work may throw
         * @param key the idempotency key, unique per logical operation within the scope
         * @param type the result's class, for reading a recorded result back (JSON-B)
         * @param work what runs once
         * @return the work's result, this call's or the recorded one
         * @throws E what the work threw (on this call, or recorded from the first)
         */
        <T, E extends Exception> T call(String key, Class<T> type, Work<T, E> work) throws E;

        /**
         * The same for a generic result type.
         *
         * @param <T> the result's type
         * @param <E> the exception the work may throw
         * @param key the idempotency key, unique per logical operation within the scope
         * @param type the result's generic type, for reading a recorded result back (JSON-B)
         * @param work what runs once
         * @return the work's result, this call's or the recorded one
         * @throws E what the work threw (on this call, or recorded from the first)
         */
        <T, E extends Exception> T call(String key, Type type, Work<T, E> work) throws E;

        /**
         * Runs {@code work} at most once per key.
         *
         * @param <E> the exception the work may throw
         * @param key the idempotency key, unique per logical operation within the scope
         * @param work what runs once
         * @throws E what the work threw (on this call, or recorded from the first)
         */
        <E extends Exception> void run(String key, VoidWork<E> work) throws E;
    }

    /**
     * Work with a result.
     *
     * @param <T> the result's type
     * @param <E> the exception it may throw
     */
    @FunctionalInterface
    interface Work<T, E extends Exception> {
        /**
         * Does the work.
         *
         * @return its result
         * @throws E when it fails
         */
        T get() throws E;
    }

    /**
     * Work without a result.
     *
     * @param <E> the exception it may throw
     */
    @FunctionalInterface
    interface VoidWork<E extends Exception> {
        /**
         * Does the work.
         *
         * @throws E when it fails
         */
        void run() throws E;
    }
}
