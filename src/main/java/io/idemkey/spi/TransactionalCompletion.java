package io.idemkey.spi;

/**
 * What {@link IdempotencyStore#completeInTransaction} did with the caller's transaction.
 */
public enum TransactionalCompletion {

    /**
     * The record is completed inside the caller's transaction: it becomes visible when that
     * transaction commits, and is undone (back to in progress) if it rolls back.
     */
    JOINED,

    /**
     * The record is no longer this owner's (its lease ran out, perhaps another request took it over):
     * nothing was written, and the caller's transaction must not commit its effects.
     */
    LOST,

    /**
     * The store cannot write in the caller's transaction (it keeps its records elsewhere, or its
     * connection is not enlisted): nothing was written; complete the record as usual afterwards.
     */
    NOT_JOINED
}
