package io.idemkey.it;

import io.idemkey.testing.PostgresServer;
import org.junit.jupiter.api.BeforeAll;

/** Two servers on one PostgreSQL. (Run in the Open Liberty execution only.) */
class JdbcTwoServersIT extends OneDatabaseTwoServersTests {

    @BeforeAll
    static void startOnPostgres() throws Exception {
        start(PostgresServer.start());
    }
}
