package io.idemkey.store.jdbc;

import io.idemkey.testing.MariaDbServer;
import io.idemkey.testing.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The cleanup on a real MariaDB. */
class MariaDbExpiredRowsCleanupTest extends ExpiredRowsCleanupTests {

    private static MariaDbServer mariadb;

    @BeforeAll
    static void startMariaDb() {
        mariadb = MariaDbServer.start();
    }

    @AfterAll
    static void stopMariaDb() {
        if (mariadb != null) {
            mariadb.close();
        }
    }

    @Override
    TestDatabase database() {
        return mariadb;
    }

    /** From MariaDB's sequence engine ({@code seq_1_to_N}). */
    @Override
    void insertRows(String prefix, int count, boolean expired) {
        mariadb.execute("INSERT INTO " + TABLE + " (record_key, completed, fingerprint, owner_token, response, expires_at) SELECT CONCAT('" + prefix + "', seq), TRUE, x'010203', 'o', " + (expired ? "x'02'" : "x'07'") + ","
                + " UTC_TIMESTAMP(6) " + (expired ? "-" : "+") + " INTERVAL 1 HOUR FROM seq_1_to_" + count);
    }

    @Override
    String now() {
        return "UTC_TIMESTAMP(6)";
    }
}
