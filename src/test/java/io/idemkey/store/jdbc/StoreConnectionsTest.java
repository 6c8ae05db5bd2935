package io.idemkey.store.jdbc;

import io.idemkey.testing.PostgresServer;
import io.idemkey.testing.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The store's bounded calls on a real PostgreSQL. */
class StoreConnectionsTest extends StoreConnectionsTests {

    private static PostgresServer postgres;

    @BeforeAll
    static void start() {
        postgres = PostgresServer.start();
        new JdbcIdempotencyStore(postgres.dataSource(), "idempotency_keys", 2).createTable();
    }

    @AfterAll
    static void stop() {
        if (postgres != null) {
            postgres.close();
        }
    }

    @Override
    TestDatabase database() {
        return postgres;
    }
}
