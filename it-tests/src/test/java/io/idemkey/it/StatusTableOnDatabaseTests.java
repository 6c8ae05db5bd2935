package io.idemkey.it;

import io.idemkey.testing.TestDatabase;
import org.junit.jupiter.api.BeforeEach;

/**
 * The status table on the JDBC store, on a server a test class started itself against a database
 * it can stop and restart: a {@code @Nested} subclass names the two ({@link #server()},
 * {@link #database()}).
 */
abstract class StatusTableOnDatabaseTests extends StatusTableTests {

    /** The enclosing test's server, as it is now (a test may have restarted it). */
    abstract ServerProcess server();

    abstract TestDatabase database();

    @BeforeEach
    void client() {
        http = new Http(server().uri(CONTEXT));
    }

    @Override
    boolean validatesBeans() {
        return true;
    }

    @Override
    StoreCalls countStoreCalls() {
        return DatabaseStatements.count(database());
    }

    @Override
    void stopStore() {
        database().stop();
    }

    @Override
    void restartStore() {
        database().restart();
    }
}
