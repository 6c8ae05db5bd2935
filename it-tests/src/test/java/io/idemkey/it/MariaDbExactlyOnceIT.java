package io.idemkey.it;

import io.idemkey.testing.MariaDbServer;
import org.junit.jupiter.api.BeforeAll;

/** Exactly-once effects with the JDBC store on MariaDB. */
class MariaDbExactlyOnceIT extends ExactlyOnceTests {

    @BeforeAll
    static void start() throws Exception {
        startOn(MariaDbServer.start());
    }
}
