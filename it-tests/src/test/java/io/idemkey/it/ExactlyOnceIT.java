package io.idemkey.it;

import io.idemkey.testing.PostgresServer;
import org.junit.jupiter.api.BeforeAll;

/** Exactly-once effects with the JDBC store on PostgreSQL. */
class ExactlyOnceIT extends ExactlyOnceTests {

    @BeforeAll
    static void start() throws Exception {
        startOn(PostgresServer.start());
    }
}
