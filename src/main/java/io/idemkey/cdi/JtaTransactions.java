package io.idemkey.cdi;

import jakarta.transaction.Status;
import jakarta.transaction.Synchronization;
import jakarta.transaction.TransactionSynchronizationRegistry;

import java.util.Optional;
import java.util.function.Supplier;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.logging.Logger;

/** {@link Transactions} through the server's {@link TransactionSynchronizationRegistry}. */
final class JtaTransactions implements Transactions {

    private static final Logger LOG = Logger.getLogger(JtaTransactions.class.getName());
    private static final String REGISTRY = "java:comp/TransactionSynchronizationRegistry";

    private final TransactionSynchronizationRegistry registry;

    private JtaTransactions(TransactionSynchronizationRegistry registry) {
        this.registry = registry;
    }

    /**
     * The server's transactions, through its registry: a CDI bean or the JNDI name, as
     * {@code resources} looks them up; {@link Transactions#NONE} where it has neither (logged).
     */
    static PlatformResources.Found<Transactions> lookup(PlatformResources resources) {
        PlatformResources.Found<TransactionSynchronizationRegistry> registry =
                resources.optional(TransactionSynchronizationRegistry.class, REGISTRY);
        if (registry.resource() == null) {
            LOG.info(() -> "Idemkey: no JTA transactions here (" + registry.origin() + "): a guarded method's"
                    + " transaction is not looked at (a response is never recorded together with the method's effects)");
            return new PlatformResources.Found<>(NONE, "no TransactionSynchronizationRegistry");
        }
        return new PlatformResources.Found<>(new JtaTransactions(registry.resource()), registry.origin());
    }

    @Override
    public boolean present() {
        return registry.getTransactionKey() != null;
    }

    @Override
    public boolean active() {
        return registry.getTransactionStatus() == Status.STATUS_ACTIVE;
    }

    @Override
    public void setRollbackOnly() {
        registry.setRollbackOnly();
    }

    @Override
    public void afterCompletion(Consumer<Boolean> ended) {
        registry.registerInterposedSynchronization(new Synchronization() {
            @Override
            public void beforeCompletion() {
            }

            @Override
            public void afterCompletion(int status) {
                ended.accept(status == Status.STATUS_COMMITTED);
            }
        });
    }

    /**
     * Interposed, like the JPA providers' own synchronisations on these servers: those run first
     * (non-interposed ones before every interposed one, interposed ones in the order registered),
     * so the persistence context has flushed when {@code work} runs.
     */
    @Override
    public void beforeCompletion(Runnable work) {
        registry.registerInterposedSynchronization(new Synchronization() {
            @Override
            public void beforeCompletion() {
                try {
                    work.run();
                } catch (RuntimeException | Error e) {
                    LOG.log(Level.WARNING, "Idemkey: the record could not be completed as the transaction commits;"
                            + " the transaction is rolled back", e);
                    registry.setRollbackOnly();
                }
            }

            @Override
            public void afterCompletion(int status) {
            }
        });
    }

    @Override
    public <T> T outside(Supplier<T> storeCall) {
        if (registry.getTransactionKey() == null) {
            return storeCall.get();
        }
        Optional<OutsideTransaction> outside = OutsideTransaction.bean();
        return outside.isPresent() ? outside.get().call(storeCall) : storeCall.get();
    }
}
