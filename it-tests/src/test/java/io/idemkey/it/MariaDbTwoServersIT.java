package io.idemkey.it;

import io.idemkey.testing.MariaDbServer;
import org.junit.jupiter.api.BeforeAll;

/** Two servers on one MariaDB. (Run in the Open Liberty execution only.) */
class MariaDbTwoServersIT extends OneDatabaseTwoServersTests {

    @BeforeAll
    static void startOnMariaDb() throws Exception {
        start(MariaDbServer.start());
    }
}
