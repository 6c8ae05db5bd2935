package io.idemkey.spi;

/** What {@link IdempotencyStore#renew} did with one lease. */
public enum Renewal {

    /** The record is still in progress under this owner token, and now lives {@code lockTtl} longer. */
    RENEWED,

    /**
     * The record is not this owner's any more: it expired (perhaps taken over by another request),
     * was completed or deleted. The owner's outcome will not be recorded.
     */
    LOST,

    /**
     * The store could not look at the record right now without waiting (a transaction holds it: the
     * owner's own completion being committed, or another renewal of the same lease). It was not
     * extended and is not known lost: the owner keeps its lease as it was and renews again later.
     */
    UNKNOWN
}
