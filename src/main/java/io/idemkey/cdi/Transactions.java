package io.idemkey.cdi;

import java.util.function.Supplier;
import java.util.function.Consumer;

/**
 * The JTA transaction of the calling thread, as Idemkey needs it: to record a response inside the
 * method's transaction and to keep its other store calls out of it. No JTA type appears here, so
 * that servers without JTA (an Open Liberty without the transaction feature) never load one.
 */
interface Transactions {

    /** Whether a transaction is associated with this thread (active, marked rollback-only, or ending). */
    boolean present();

    /** Whether a transaction is active on this thread (not marked rollback-only, not ending). */
    boolean active();

    /** Marks the active transaction so that it can only roll back. */
    void setRollbackOnly();

    /** Calls {@code ended} with {@code true} (committed) or {@code false} once the active transaction ends. */
    void afterCompletion(Consumer<Boolean> ended);

    /**
     * Runs {@code work} as the active transaction is about to commit, after the synchronisations
     * registered before it: the persistence contexts the transaction has used have flushed by then
     * (their providers register on first use). If {@code work} fails, the transaction is marked
     * rollback-only (and the failure logged).
     */
    void beforeCompletion(Runnable work);

    /**
     * Runs a store call outside the active transaction (suspended meanwhile), so that it takes effect
     * at once whatever becomes of the transaction, the way it does without one.
     */
    <T> T outside(Supplier<T> storeCall);

    /** A server without JTA: never a transaction. */
    Transactions NONE = new Transactions() {
        @Override
        public boolean present() {
            return false;
        }

        @Override
        public boolean active() {
            return false;
        }

        @Override
        public void setRollbackOnly() {
            throw new IllegalStateException("no transaction");
        }

        @Override
        public void afterCompletion(Consumer<Boolean> ended) {
            throw new IllegalStateException("no transaction");
        }

        @Override
        public void beforeCompletion(Runnable work) {
            throw new IllegalStateException("no transaction");
        }

        @Override
        public <T> T outside(Supplier<T> storeCall) {
            return storeCall.get();
        }
    };
}
