package io.idemkey.it;

import io.idemkey.testing.TestDatabase;

import java.util.Collections;
import java.util.List;

/**
 * The statements servers send to the idempotency table, as the database counts them: PostgreSQL's
 * {@code pg_stat_statements}, MariaDB's performance schema (statement digests). The cleanup's
 * DELETE, the DDL and these counts themselves are left out.
 */
public final class DatabaseStatements {

    private DatabaseStatements() {
    }

    /** Makes the database count (PostgreSQL: the extension; the test cluster preloads its library). */
    public static void enable(TestDatabase database) {
        if (database.name().equals("PostgreSQL")) {
            database.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
        }
    }

    /** Counts from now on: one entry per statement on the table. */
    static StatusTableTests.StoreCalls count(TestDatabase database) {
        long[] seen = {soFar(database)};
        return new StatusTableTests.StoreCalls() {
            @Override
            public String name() {
                return "statement";
            }

            @Override
            public List<String> take() {
                long now = soFar(database);
                List<String> calls = Collections.nCopies((int) (now - seen[0]), "statement");
                seen[0] = now;
                return calls;
            }

            @Override
            public void close() {
            }
        };
    }

    /** Statements on the table so far. */
    static long soFar(TestDatabase database) {
        return soFar(database, "idempotency_keys");
    }

    public static long soFar(TestDatabase database, String table) {
        if (database.name().equals("MariaDB")) {
            return database.queryLong("SELECT COALESCE(SUM(COUNT_STAR), 0) FROM performance_schema.events_statements_summary_by_digest"
                    + " WHERE DIGEST_TEXT LIKE ? AND DIGEST_TEXT NOT LIKE '%SKIP LOCKED ) AS `expired`%'"
                    + " AND DIGEST_TEXT NOT LIKE '%performance_schema%' AND DIGEST_TEXT NOT LIKE 'CREATE%'",
                    "%`" + table + "`%");
        }
        return database.queryLong("SELECT coalesce(sum(calls), 0) FROM pg_stat_statements WHERE query LIKE ?"
                + " AND query NOT LIKE 'DELETE FROM%' AND query NOT LIKE '%pg_stat_statements%' AND query NOT LIKE 'CREATE%'",
                "%" + table + "%");
    }
}
