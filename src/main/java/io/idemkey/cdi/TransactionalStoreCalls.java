package io.idemkey.cdi;

import io.idemkey.IdempotencyException;
import io.idemkey.core.Decision;
import io.idemkey.core.Execution;
import io.idemkey.core.IdempotentCalls;
import io.idemkey.core.Scheduler;
import io.idemkey.core.StoredResponse;
import io.idemkey.spi.IdempotencyStore;

import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import java.util.logging.Logger;

/**
 * An idempotent call's store work around the JTA transaction it runs in. The key is acquired (and
 * released after a failure) outside the transaction, so that every other caller sees the record at
 * once and the lease renewals find it. The outcome is recorded as the HTTP side records a response:
 * without a transaction, at once; in one, only if it commits (an outcome whose
 * effects were rolled back is never returned to a later call: the key is released and it runs
 * again). Where the store joins the transaction (the JDBC store), the outcome is written inside it,
 * so it commits with the call's effects or not at all. Releases after a failure happen outside the
 * transaction, at once.
 */
final class TransactionalStoreCalls implements IdempotentCalls.StoreCalls {

    private static final Logger LOG = Logger.getLogger(TransactionalStoreCalls.class.getName());

    private final Transactions transactions;
    private final IdempotencyStore store;
    private final CompletionWithEffects completionWithEffects;
    private final Scheduler scheduler;
    private final Duration unavailableRetryAfter;

    TransactionalStoreCalls(Transactions transactions, IdempotencyStore store, CompletionWithEffects completionWithEffects,
                            Scheduler scheduler, Duration unavailableRetryAfter) {
        this.transactions = transactions;
        this.store = store;
        this.completionWithEffects = completionWithEffects;
        this.scheduler = scheduler;
        this.unavailableRetryAfter = unavailableRetryAfter;
    }

    @Override
    public Decision acquire(Supplier<Decision> acquire) {
        return store.joinsTransactions() ? transactions.outside(acquire) : acquire.get();
    }

    @Override
    public void record(Execution execution, StoredResponse outcome, Supplier<StoredResponse> outcomeAtCommit) {
        if (!transactions.present()) {
            execution.complete(outcome);
            return;
        }
        if (!transactions.active()) {
            release(execution, "its transaction is marked rollback-only");
            return;
        }
        AtomicBoolean joined = new AtomicBoolean();
        AtomicReference<StoredResponse> recorded = new AtomicReference<>(outcome);
        execution.workBegins(); // the lease is renewed until the transaction ends, however long the caller's runs on
        try {
            transactions.beforeCompletion(() -> recorded.set(atCommit(execution, recorded.get(), outcomeAtCommit, joined.get())));
            transactions.afterCompletion(committed -> afterCompletion(execution, recorded.get(), joined.get(), committed));
        } catch (RuntimeException e) {
            execution.workEnded();
            throw e;
        }
        if (!store.joinsTransactions()) {
            return;
        }
        CompletionWithEffects.Outcome completion = completionWithEffects.complete(execution, outcome);
        switch (completion.result()) {
            case FAILED -> throw new IdempotencyException.Unavailable(execution.key(), "The call's outcome could not be"
                    + " recorded with its effects, so its transaction is rolled back. Try again with the same key.",
                    unavailableRetryAfter, completion.failure());
            case LOST -> throw new IdempotencyException.TakenOver(execution.key());
            case JOINED -> joined.set(true);
            case NOT_JOINED -> {
            }
        }
    }

    /**
     * The outcome as the transaction commits, after its persistence contexts flushed (a returned
     * entity's generated id and version are set only then): the one recorded, in the transaction
     * where the record was written in it, after the commit otherwise. If it cannot be written again,
     * the outcome as the call returned stays.
     */
    private StoredResponse atCommit(Execution execution, StoredResponse returned, Supplier<StoredResponse> outcomeAtCommit,
                                    boolean joined) {
        StoredResponse latest;
        try {
            latest = outcomeAtCommit.get();
        } catch (RuntimeException notSerialisable) {
            LOG.warning(() -> "Idemkey: the outcome of the call with the key '" + execution.shownKey() + "' in "
                    + execution.endpoint() + " could not be written as JSON as its transaction commits ("
                    + notSerialisable + "); it is recorded as the call returned it");
            return returned;
        }
        if (joined) {
            execution.renderedAtCommit(latest);
        }
        return latest;
    }

    private void afterCompletion(Execution execution, StoredResponse outcome, boolean joined, boolean committed) {
        execution.workEnded();
        execution.transactionEnded(committed); // also where the lease was lost: the store lets go of the transaction
        if (joined) {
            if (!committed) {
                afterTransaction(execution, "release", () -> execution.release("its transaction rolled back"));
            }
        } else {
            afterTransaction(execution, committed ? "complete" : "release",
                    committed ? () -> execution.complete(outcome) : () -> execution.release("its transaction rolled back"));
        }
    }

    /**
     * Released at once, outside the transaction. If the transaction then commits all the same (a
     * checked exception does not roll back a {@code @Transactional} method unless {@code rollbackOn}
     * says so), the call's effects stay while a later call runs again: said loudly, never silently.
     */
    @Override
    public void release(Execution execution, String reason) {
        if (transactions.active()) {
            transactions.afterCompletion(committed -> {
                if (committed) {
                    LOG.warning(() -> "Idemkey: the call with the key '" + execution.shownKey() + "' in " + execution.endpoint()
                            + " failed (" + reason + ") but its transaction committed: its effects are kept, and a later"
                            + " call with the key runs again. Roll the transaction back on that exception (rollbackOn),"
                            + " or list it in recordedExceptions if it is an outcome.");
                }
            });
        }
        transactions.outside(() -> {
            execution.release(reason);
            return true;
        });
    }

    /**
     * A store call once the transaction has ended: on this thread for a store outside transactions
     * (Redis, at once, before the call returns); on the scheduler for one that joins them, whose
     * connection must not be taken from a pool while the ended transaction is still on this thread.
     */
    private void afterTransaction(Execution execution, String operation, Runnable storeCall) {
        if (store.joinsTransactions()) {
            try {
                scheduler.once(Duration.ZERO, storeCall);
            } catch (RejectedExecutionException stopping) { // in a transaction's afterCompletion: nobody else would say it
                execution.droppedAtShutdown(operation);
            }
        } else {
            storeCall.run();
        }
    }
}
