package io.idemkey.it;

import io.idemkey.testing.MariaDbServer;
import org.junit.jupiter.api.BeforeAll;

/** The HTTP contract with the JDBC store on MariaDB. */
class MariaDbStoreIT extends JdbcStoreTests {

    @BeforeAll
    static void start() throws Exception {
        startOn(MariaDbServer.start());
    }
}
