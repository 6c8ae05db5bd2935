package io.idemkey.store.jdbc;

import io.idemkey.testing.MariaDbServer;
import io.idemkey.testing.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The store's bounded calls on a real MariaDB. */
class MariaDbStoreConnectionsTest extends StoreConnectionsTests {

    private static MariaDbServer mariadb;

    @BeforeAll
    static void start() {
        mariadb = MariaDbServer.start();
        new JdbcIdempotencyStore(mariadb.dataSource(), "idempotency_keys", 2).createTable();
    }

    @AfterAll
    static void stop() {
        if (mariadb != null) {
            mariadb.close();
        }
    }

    @Override
    TestDatabase database() {
        return mariadb;
    }
}
