package io.idemkey.cdi;

import io.idemkey.core.Execution;
import io.idemkey.core.StoredResponse;
import io.idemkey.spi.IdempotencyStore;
import io.idemkey.spi.TransactionalCompletion;
import io.idemkey.store.jdbc.NoConnectionException;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Logger;

/**
 * A guarded method's outcome recorded inside its JTA transaction, the same way for a resource
 * method and for an {@code @Idempotent} call: the record commits with the method's effects or not
 * at all. When the record cannot be written in the transaction, the transaction must not commit
 * the effects without it: it is marked rollback-only and the key is released (the caller answers
 * "retry"). One exception: the store got no connection in this transaction while it answers
 * outside it and the transaction can still commit (Payara refuses to enlist a second non-XA
 * resource and leaves the transaction as it was): the outcome is recorded after the commit, as for
 * a store that never joins. (Open Liberty refuses it too, but marks the transaction rollback-only.)
 */
final class CompletionWithEffects {

    private static final Logger LOG = Logger.getLogger(CompletionWithEffects.class.getName());

    /** What became of the record. */
    enum Result {
        /** Written in the transaction: it commits with the effects. */
        JOINED,
        /** Not written: record it after the commit, as usual. */
        NOT_JOINED,
        /** The lease was lost: the transaction is marked rollback-only (the caller answers 409). */
        LOST,
        /** It could not be written: the transaction is marked rollback-only and the key will be released. */
        FAILED
    }

    record Outcome(Result result, RuntimeException failure) {
    }

    private final Transactions transactions;
    private final IdempotencyStore store;
    private final AtomicBoolean warnedNotEnlisted = new AtomicBoolean();

    CompletionWithEffects(Transactions transactions, IdempotencyStore store) {
        this.transactions = transactions;
        this.store = store;
    }

    Outcome complete(Execution execution, StoredResponse response) {
        TransactionalCompletion completion;
        try {
            completion = execution.completeInTransaction(response);
        } catch (RuntimeException e) {
            // (Open Liberty marks the transaction rollback-only as it refuses: then its effects are gone)
            if (e instanceof NoConnectionException && transactions.active() && transactions.outside(store::isAvailable)) {
                if (warnedNotEnlisted.compareAndSet(false, true)) {
                    LOG.warning("Idemkey records responses after their transaction, not in it: the container gave the"
                            + " store no connection in the guarded method's transaction (" + e.getMessage() + "). Use the"
                            + " DataSource the method writes through, or XA DataSources (see docs/jdbc.md, A second DataSource for the records)");
                }
                return new Outcome(Result.NOT_JOINED, null);
            }
            execution.markRetryable();
            transactions.setRollbackOnly();
            return new Outcome(Result.FAILED, e);
        }
        return switch (completion) {
            case JOINED -> new Outcome(Result.JOINED, null);
            case NOT_JOINED -> new Outcome(Result.NOT_JOINED, null);
            case LOST -> {
                transactions.setRollbackOnly();
                yield new Outcome(Result.LOST, null);
            }
        };
    }
}
