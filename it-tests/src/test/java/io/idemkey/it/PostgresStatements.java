package io.idemkey.it;

import io.idemkey.testing.PostgresServer;

import java.util.Collections;
import java.util.List;

/** The statements servers send to the idempotency table, as PostgreSQL's pg_stat_statements counts them. */
public final class PostgresStatements {

    private PostgresStatements() {
    }

    /** Creates the extension (the test cluster preloads its library). */
    public static void enable(PostgresServer postgres) {
        postgres.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
    }

    /** Counts from now on: one entry per statement on the table, the cleanup's aside. */
    static StatusTableTests.StoreCalls count(PostgresServer postgres) {
        long[] seen = {soFar(postgres)};
        return new StatusTableTests.StoreCalls() {
            @Override
            public String name() {
                return "statement";
            }

            @Override
            public List<String> take() {
                long now = soFar(postgres);
                List<String> calls = Collections.nCopies((int) (now - seen[0]), "statement");
                seen[0] = now;
                return calls;
            }

            @Override
            public void close() {
            }
        };
    }

    /** Statements on the table so far (the cleanup's DELETE, the DDL and these counts aside). */
    static long soFar(PostgresServer postgres) {
        return soFar(postgres, "idempotency_keys");
    }

    public static long soFar(PostgresServer postgres, String table) {
        return postgres.queryLong("SELECT coalesce(sum(calls), 0) FROM pg_stat_statements WHERE query LIKE ?"
                + " AND query NOT LIKE 'DELETE FROM%' AND query NOT LIKE '%pg_stat_statements%' AND query NOT LIKE 'CREATE%'",
                "%" + table + "%");
    }
}
