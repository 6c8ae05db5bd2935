package io.idemkey.store.jdbc;

import io.idemkey.testing.PostgresServer;
import io.idemkey.testing.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The cleanup on a real PostgreSQL. */
class ExpiredRowsCleanupTest extends ExpiredRowsCleanupTests {

    private static PostgresServer postgres;

    @BeforeAll
    static void startPostgres() {
        postgres = PostgresServer.start();
    }

    @AfterAll
    static void stopPostgres() {
        if (postgres != null) {
            postgres.close();
        }
    }

    @Override
    TestDatabase database() {
        return postgres;
    }

    @Override
    void insertRows(String prefix, int count, boolean expired) {
        postgres.execute("INSERT INTO " + TABLE + " (record_key, completed, fingerprint, owner_token, response, expires_at) SELECT '" + prefix + "' || i, TRUE, '\\x010203', 'o', '" + (expired ? "\\x02" : "\\x07") + "', now() "
                + (expired ? "-" : "+") + " INTERVAL '1 hour' FROM generate_series(1, " + count + ") i");
    }

    @Override
    String now() {
        return "now()";
    }
}
