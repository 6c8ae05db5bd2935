package io.idemkey.spi;

import java.time.Duration;
import java.util.List;

/**
 * Where idempotency records live. A record is created {@code IN_PROGRESS} by {@link #acquire}, owned
 * by the caller's owner token, and ends either {@code COMPLETED} with the response to replay
 * ({@link #complete}) or deleted ({@link #release}); while it is in progress its owner keeps it
 * alive with {@link #renew}. The store expires records itself: an in-progress record after its lock
 * TTL (so a crashed owner's key frees itself), a completed one after its TTL.
 *
 * <p><b>Atomicity.</b> Each operation is one atomic step against shared state (for Redis: one
 * round trip running one Lua script, or one atomic command). In particular {@code acquire} must never let two callers
 * acquire the same key: there is no window between "look" and "take".
 *
 * <p><b>Fencing.</b> {@code complete}, {@code release} and {@code renew} are compare-and-set on the
 * owner token: they change the record only if it is still in progress and still owned by that
 * token, and report {@code false} otherwise (the lease was lost: expired and perhaps taken over).
 * {@code complete} and {@code release} are also idempotent for their token, so that a call retried
 * after its reply was lost reports the outcome of the first: completing again what this token
 * completed reports {@code true}, and so does releasing a key that is already free.
 *
 * <p><b>Threads and nulls.</b> Implementations are thread-safe. No argument is {@code null}; no
 * method returns {@code null}. Durations are positive and at least one millisecond. Fingerprints
 * and owner tokens are short (the engine's are 32 and 16 bytes; a store may refuse more than 255).
 *
 * <p><b>Failures.</b> When the store cannot be reached within its timeouts an operation throws
 * {@link StoreUnavailableException}; any other exception means a defect or a misconfigured store.
 */
public interface IdempotencyStore extends AutoCloseable {

    /**
     * Creates the record {@code IN_PROGRESS} for {@code ownerToken} with the given fingerprint and
     * lock TTL if no record exists under {@code recordKey}; otherwise reports the existing one.
     * A different fingerprint is reported as {@link AcquireResult.Mismatch} whatever the existing
     * record's state.
     *
     * @param recordKey   the namespaced record key (prefix, then the escaped scope and client key, or their
     *                    HMAC with {@code idempotency.encryption.identifier-key}): no caller-controlled byte
     *                    can address a foreign record
     * @param fingerprint the request fingerprint (opaque bytes, compared for equality)
     * @param ownerToken  a token unique to this attempt
     * @param lockTtl     how long the in-progress record lives unless renewed
     * @return what the store found or did
     */
    AcquireResult acquire(String recordKey, byte[] fingerprint, String ownerToken, Duration lockTtl);

    /**
     * {@link #acquire(String, byte[], String, Duration)} that first counts the request against the
     * key's {@link RateLimit}, in the same atomic step (no extra round trip): the count of a key
     * starts with its first request and is forgotten when the window ends (the store expires it).
     * Beyond the limit it reports {@link AcquireResult.RateLimited} and does nothing else.
     *
     * <p>Stores that cannot count answer {@link #countsRequests()} {@code false} and need not
     * implement this; Idemkey then refuses to start with a rate limit configured.
     *
     * @param recordKey the record's key
     * @param fingerprint the request's fingerprint
     * @param ownerToken a token unique to this attempt
     * @param lockTtl how long the record stays in progress without a renewal
     * @param limit the rate limit per key, or {@code null} for none
     * @return what the store found or did
     */
    default AcquireResult acquire(String recordKey, byte[] fingerprint, String ownerToken, Duration lockTtl,
                                  RateLimit limit) {
        throw new UnsupportedOperationException(getClass().getName() + " does not count requests per key");
    }

    /**
     * Whether this store implements {@link #acquire(String, byte[], String, Duration, RateLimit)}.
     *
     * @return whether {@link #acquire(String, byte[], String, Duration, RateLimit)} counts requests
     */
    default boolean countsRequests() {
        return false;
    }

    /**
     * Stores the response and marks the record {@code COMPLETED} for {@code ttl}, if it is still in
     * progress and owned by {@code ownerToken}. The response is opaque to the store (the engine's
     * encoding of status, headers and body) and is handed back unchanged by {@link #acquire}.
     *
     * @return {@code true} if the record is completed with this token's response (now or by an
     *         earlier call), {@code false} if the lease was lost
     * @param recordKey the record's key
     * @param ownerToken the owner token the record was acquired with
     * @param response the response to replay, stored as it is
     * @param ttl how long the completed record is kept
     */
    boolean complete(String recordKey, String ownerToken, byte[] response, Duration ttl);

    /**
     * {@link #complete(String, String, byte[], Duration)}, told also the fingerprint the record was
     * acquired with, so that a store can recognise its record in progress without reading it first
     * (the Redis store: one compare-and-set command where Redis has one, instead of a script). The
     * engine calls this one; this default ignores the fingerprint. A store that delegates to another
     * should pass this call on as it is, or the other store never sees the fingerprint.
     *
     * @return {@code true} if the record is completed with this token's response (now or by an
     *         earlier call), {@code false} if the lease was lost
     * @param recordKey the record's key
     * @param ownerToken the owner token the record was acquired with
     * @param fingerprint the fingerprint the record was acquired with
     * @param response the response to replay, stored as it is
     * @param ttl how long the completed record is kept
     */
    default boolean complete(String recordKey, String ownerToken, byte[] fingerprint, byte[] response, Duration ttl) {
        return complete(recordKey, ownerToken, response, ttl);
    }

    /**
     * {@link #complete} inside the JTA transaction active on the calling thread, so that the record
     * commits or rolls back together with the method's effects (exactly-once effects when they live
     * in the same database). Stores that keep their records outside the application's transactions
     * answer {@link TransactionalCompletion#NOT_JOINED} and write nothing, as this default does.
     * Called on the thread that runs the transaction, only if {@link #joinsTransactions()}.
     *
     * @param recordKey the record's key
     * @param ownerToken the owner token the record was acquired with
     * @param response the response to replay, stored as it is
     * @param ttl how long the completed record is kept
     * @return what became of the completion in the caller's transaction
     */
    default TransactionalCompletion completeInTransaction(String recordKey, String ownerToken, byte[] response,
                                                          Duration ttl) {
        return TransactionalCompletion.NOT_JOINED;
    }

    /**
     * Whether {@link #completeInTransaction} can join the caller's transaction at all. A store that
     * joins also implements {@link #replaceResponseInTransaction}, {@link #transactionEnded} and
     * {@link #replaceResponse}, so that its records hold the response as the client received it; a
     * store that delegates to one that joins passes those calls on (the JDBC store keeps a
     * connection open until {@link #transactionEnded}).
     *
     * @return whether {@link #completeInTransaction} can join the caller's transaction
     */
    default boolean joinsTransactions() {
        return false;
    }

    /**
     * Replaces the response of a record that {@link #completeInTransaction} completed in the JTA
     * transaction active on the calling thread, inside that transaction, while it commits: the
     * method's result rendered again once the transaction has flushed its persistence context
     * (generated ids, versions and callbacks' values are set only then). The transaction still holds
     * the record, so no other request can have taken it. Stores that never join transactions keep
     * this default, which writes nothing.
     *
     * @return {@code true} if the record now holds {@code response}
     * @param recordKey the record's key
     * @param ownerToken the owner token the record was acquired and completed with
     * @param response the response to replay instead, stored as it is
     */
    default boolean replaceResponseInTransaction(String recordKey, String ownerToken, byte[] response) {
        return false;
    }

    /**
     * The transaction {@link #completeInTransaction} completed this record in has ended, committed
     * or rolled back: the store lets go of what it kept for the transaction (the JDBC store: the
     * connection {@link #replaceResponseInTransaction} writes through). This default keeps nothing.
     *
     * @param recordKey the record's key
     * @param ownerToken the owner token the record was acquired and completed with
     */
    default void transactionEnded(String recordKey, String ownerToken) {
    }

    /**
     * Replaces the response of a completed record that is still alive and owned by
     * {@code ownerToken}, outside any transaction, leaving its expiry as it is: where the response
     * the client received differs from the one committed with the method's effects (a response
     * filter changed it after the commit). Stores that never join transactions complete their
     * records from the response as written and keep this default, which writes nothing.
     *
     * @return {@code true} if the record now holds {@code response}, {@code false} if it is gone,
     *         not completed or owned by another request
     * @param recordKey the record's key
     * @param ownerToken the owner token the record was acquired and completed with
     * @param response the response to replay instead, stored as it is
     */
    default boolean replaceResponse(String recordKey, String ownerToken, byte[] response) {
        return false;
    }

    /**
     * Deletes the record if it is still in progress and owned by {@code ownerToken}, so that a retry
     * with the same key runs again.
     *
     * @return {@code true} if the key is free (deleted now, or no record exists any more),
     *         {@code false} if another owner holds it or it is completed
     * @param recordKey the record's key
     * @param ownerToken the owner token the record was acquired with
     */
    boolean release(String recordKey, String ownerToken);

    /**
     * Extends an in-progress record's life to {@code lockTtl} from now, if it is still owned by
     * {@code ownerToken}.
     *
     * @return {@link Renewal#RENEWED} if the lease was extended, {@link Renewal#LOST} if it was lost,
     *         {@link Renewal#UNKNOWN} if the store could not look at the record without waiting (a
     *         store whose records can be held by a transaction)
     * @param recordKey the record's key
     * @param ownerToken the owner token the record was acquired with
     * @param lockTtl the new time the record stays in progress from now
     */
    Renewal renew(String recordKey, String ownerToken, Duration lockTtl);

    /**
     * {@link #renew(String, String, Duration)} for several leases at once, each compare-and-set on
     * its own owner token as if renewed alone, in as few round trips as the store can (Redis: one,
     * pipelined; JDBC: one statement), so that the leases due together are never renewed one slow
     * round trip after the other. This default renews them one by one: a store with a network
     * between it and its data should override it.
     *
     * @return for each lease, in order, what its renewal did
     * @throws StoreUnavailableException if the store could not be reached (no lease is known renewed)
     * @param leases the leases to renew, each with its own lock TTL
     */
    default Renewal[] renew(List<Lease> leases) {
        Renewal[] renewals = new Renewal[leases.size()];
        for (int i = 0; i < renewals.length; i++) {
            Lease lease = leases.get(i);
            renewals[i] = renew(lease.recordKey(), lease.ownerToken(), lease.lockTtl());
        }
        return renewals;
    }

    /**
     * Whether the store answers right now (one cheap round trip); for readiness checks, never called
     * on the request path.
     *
     * @return {@code true} when the store answered
     */
    boolean isAvailable();

    /** Releases connections and threads. Records are left to their TTL. */
    @Override
    void close();
}
