package io.idemkey.it.resources;

import jakarta.enterprise.concurrent.ManagedThreadFactory;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Named;
import jakarta.transaction.TransactionSynchronizationRegistry;

import javax.naming.InitialContext;
import javax.naming.NamingException;
import javax.sql.DataSource;

/**
 * The platform's resources as CDI beans, the way Quarkus and Helidon MP offer them (they bind
 * nothing in JNDI): here produced from the server's own, the DataSource under a bean name that is no
 * JNDI name. Each is looked up by the application, not injected into a {@code @Resource} field:
 * Idemkey starts as the application initializes, and Payara Micro has not bound the application's
 * {@code java:comp/env} by then.
 */
@ApplicationScoped
public class CdiResources {

    /** The bean name {@code idempotency.jdbc.datasource} names. */
    public static final String DATA_SOURCE = "orders";

    @Produces
    @Named(DATA_SOURCE)
    @ApplicationScoped
    DataSource orders() throws NamingException {
        return InitialContext.doLookup("jdbc/idemkey");
    }

    @Produces
    @ApplicationScoped
    TransactionSynchronizationRegistry registry() throws NamingException {
        return InitialContext.doLookup("java:comp/TransactionSynchronizationRegistry");
    }

    @Produces
    @ApplicationScoped
    ManagedThreadFactory threads() throws NamingException {
        return InitialContext.doLookup("java:comp/DefaultManagedThreadFactory");
    }
}
