package io.idemkey.it;

import io.idemkey.testing.PostgresServer;
import org.junit.jupiter.api.BeforeAll;

/** The HTTP contract with the JDBC store on PostgreSQL. */
class JdbcStoreIT extends JdbcStoreTests {

    @BeforeAll
    static void start() throws Exception {
        startOn(PostgresServer.start());
    }
}
