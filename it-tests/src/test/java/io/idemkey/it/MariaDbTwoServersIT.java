package io.idemkey.it;

import io.idemkey.testing.MariaDbServer;
import org.jboss.shrinkwrap.api.exporter.ZipExporter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Two servers on one MariaDB (each through its own DataSource). (Starts both kinds itself: run in
 * the Open Liberty execution only.)
 */
class MariaDbTwoServersIT extends TwoServersTests {

    private static MariaDbServer mariadb;
    private static ServerProcess payara;
    private static ServerProcess liberty;

    @BeforeAll
    static void start() throws Exception {
        mariadb = MariaDbServer.start();
        DatabaseStatements.enable(mariadb);
        Path war = Files.createTempDirectory("idemkey-two-servers-mariadb").resolve("shared.war");
        Deployments.guardedApp("shared", JdbcStoreIT.JDBC).as(ZipExporter.class).exportTo(war.toFile(), true);
        ServerProcess[] both = startBoth(kind ->
                ServerProcess.startForTestsWithDatabase(kind, List.of(war), ServerProcess.freePort(), mariadb));
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
        if (mariadb != null) {
            mariadb.close();
        }
    }

    @Override
    ServerProcess payara() {
        return payara;
    }

    @Override
    ServerProcess liberty() {
        return liberty;
    }

    @Override
    StatusTableTests.StoreCalls countStoreCalls() {
        return DatabaseStatements.count(mariadb);
    }
}
