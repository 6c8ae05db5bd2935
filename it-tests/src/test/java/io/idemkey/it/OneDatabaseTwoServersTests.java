package io.idemkey.it;

import io.idemkey.testing.TestDatabase;
import org.jboss.shrinkwrap.api.exporter.ZipExporter;
import org.junit.jupiter.api.AfterAll;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Two servers on one database, each through its own DataSource: the subclass starts its database
 * ({@link #start}). (Starts both kinds itself: run in the Open Liberty execution only.)
 */
abstract class OneDatabaseTwoServersTests extends TwoServersTests {

    private static TestDatabase database;
    private static ServerProcess payara;
    private static ServerProcess liberty;

    /** Both servers, with the shared application on the JDBC store, on {@code started}. */
    static void start(TestDatabase started) throws Exception {
        database = started;
        DatabaseStatements.enable(database);
        Path war = Files.createTempDirectory("idemkey-two-servers-jdbc").resolve("shared.war");
        Deployments.guardedApp("shared", onALongLease(JdbcStoreIT.JDBC)).as(ZipExporter.class).exportTo(war.toFile(), true);
        ServerProcess[] both = startBoth(kind ->
                ServerProcess.startForTestsWithDatabase(kind, List.of(war), ServerProcess.freePort(), database));
        payara = both[0];
        liberty = both[1];
    }

    @AfterAll
    static void stop() {
        if (payara != null) {
            payara.close();
        }
        if (liberty != null) {
            liberty.close();
        }
        if (database != null) {
            database.close();
        }
    }

    @Override
    ServerProcess payara() {
        return payara;
    }

    @Override
    ServerProcess other() {
        return liberty;
    }

    @Override
    StatusTableTests.StoreCalls countStoreCalls() {
        return DatabaseStatements.count(database);
    }
}
