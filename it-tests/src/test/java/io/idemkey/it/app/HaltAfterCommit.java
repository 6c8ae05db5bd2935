package io.idemkey.it.app;

import jakarta.transaction.Status;
import jakarta.transaction.Synchronization;
import jakarta.transaction.TransactionSynchronizationRegistry;

import javax.naming.InitialContext;
import javax.naming.NamingException;

/**
 * The crash the exactly-once tests need: the JVM halts right after the current transaction commits,
 * so that nothing after the commit happens (no response, no record written after it). Shared by the
 * test applications that crash (the JPA one adds this class to its archive).
 */
public final class HaltAfterCommit {

    private HaltAfterCommit() {
    }

    /** Registers the halt with the transaction active on this thread. */
    public static void register() throws NamingException {
        ((TransactionSynchronizationRegistry) new InitialContext().lookup("java:comp/TransactionSynchronizationRegistry"))
                .registerInterposedSynchronization(new Synchronization() {
                    @Override
                    public void beforeCompletion() {
                    }

                    @Override
                    public void afterCompletion(int status) {
                        if (status == Status.STATUS_COMMITTED) {
                            Runtime.getRuntime().halt(137);
                        }
                    }
                });
    }
}
