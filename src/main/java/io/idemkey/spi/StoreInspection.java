package io.idemkey.spi;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * An optional capability of an {@link IdempotencyStore}, for operators: read one record as it is,
 * delete one on purpose, and walk the records in progress page by page. A store offers it by
 * implementing this interface beside {@link IdempotencyStore}; Idemkey's admin API and command line
 * tool use it where it is there and say so where it is not. None of these operations is on the
 * request path.
 *
 * <p><b>Threads, nulls, failures</b> as in {@link IdempotencyStore}: implementations are thread-safe,
 * no argument is {@code null}, no method returns {@code null} (an absent cursor is the empty string),
 * and a store that cannot be reached throws {@link StoreUnavailableException}.
 */
public interface StoreInspection {

    /**
     * The record under {@code recordKey} as the store keeps it now, if one exists and has not expired.
     *
     * @param recordKey the key the store keeps the record under (hashed, where identifiers are hashed)
     * @return the record, or empty
     */
    Optional<StoredRecord> inspect(String recordKey);

    /**
     * Deletes the record under {@code recordKey} in one atomic step: a completed one always, an
     * in-progress one only with {@code force} (its owner then loses its lease: its completion or
     * release reports the lease lost, and a retry with the key runs again).
     *
     * @param recordKey the key the store keeps the record under
     * @param force     whether an in-progress record is deleted too
     * @return what the store found and did
     */
    Purge purge(String recordKey, boolean force);

    /**
     * One page of the records in progress whose key starts with {@code keyPrefix}, in the store's own
     * order, bounded: about {@code limit} records, after looking at a bounded number of keys (a
     * page may hold fewer records, even none, and still have a next page; a store whose walk cannot
     * stop half-way, Redis's SCAN, may add what its last step found: the Redis store's pages hold at
     * most the limit plus one SCAN call's keys). Records that change while
     * the pages are walked may be missed or seen twice; none that stays in progress throughout is
     * missed.
     *
     * @param keyPrefix the key prefix the records' keys start with
     * @param cursor    where to go on: the empty string for the first page, then the previous page's
     *                  {@link Page#nextCursor()}
     * @param limit     how many records to return, 1 to 1000
     * @return the page
     * @throws IllegalArgumentException if the cursor is not one this store made, or the limit is out of range
     */
    Page inProgress(String keyPrefix, String cursor, int limit);

    /** What {@link #purge} found and did. */
    enum Purge {
        /** The record was there and is deleted. */
        PURGED,
        /** No record was there (never, or expired): nothing changed. */
        ABSENT,
        /** The record is in progress and {@code force} was not given: nothing changed. */
        IN_PROGRESS
    }

    /**
     * One record as the store keeps it.
     *
     * @param recordKey   the key the store keeps it under
     * @param completed   whether it is completed (otherwise in progress)
     * @param fingerprint the request fingerprint stored with it
     * @param ownerToken  the owner token: the whole token while in progress; what the store keeps of it
     *                    once completed (the Redis store keeps its first 8 characters)
     * @param timeLeft    how long until the store expires it (an in-progress record's lease left)
     * @param response    the stored response of a completed record, exactly as passed to
     *                    {@link IdempotencyStore#complete}; empty while in progress
     */
    record StoredRecord(String recordKey, boolean completed, byte[] fingerprint, String ownerToken, Duration timeLeft,
                        byte[] response) {
        /**
         * Checks the components.
         *
         * @param recordKey   the key
         * @param completed   whether it is completed
         * @param fingerprint the fingerprint
         * @param ownerToken  the owner token
         * @param timeLeft    the time left
         * @param response    the stored response, or empty
         */
        public StoredRecord {
            Objects.requireNonNull(recordKey, "recordKey");
            Objects.requireNonNull(fingerprint, "fingerprint");
            Objects.requireNonNull(ownerToken, "ownerToken");
            Objects.requireNonNull(timeLeft, "timeLeft");
            Objects.requireNonNull(response, "response");
        }
    }

    /**
     * One page of {@link #inProgress}.
     *
     * @param records    the records in progress found on this page
     * @param nextCursor where the next page starts, or the empty string after the last page
     */
    record Page(List<StoredRecord> records, String nextCursor) {
        /**
         * Checks the components.
         *
         * @param records    the records
         * @param nextCursor the next cursor, or empty
         */
        public Page {
            records = List.copyOf(records);
            Objects.requireNonNull(nextCursor, "nextCursor");
        }

        /**
         * Whether there is no page after this one.
         *
         * @return whether this is the last page
         */
        public boolean last() {
            return nextCursor.isEmpty();
        }
    }

    /**
     * Checks {@link #inProgress}'s limit.
     *
     * @param limit the limit asked for
     * @return the limit
     * @throws IllegalArgumentException outside 1 to 1000
     */
    static int checkLimit(int limit) {
        if (limit < 1 || limit > 1000) {
            throw new IllegalArgumentException("the limit must be 1 to 1000: " + limit);
        }
        return limit;
    }
}
