package io.idemkey.it;

import org.jboss.shrinkwrap.api.exporter.ZipExporter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/** Two servers on one Redis. (Starts both kinds itself: run in the Open Liberty execution only.) */
class TwoServersIT extends TwoServersTests {

    private static ServerProcess payara;
    private static ServerProcess liberty;

    @BeforeAll
    static void start() throws Exception {
        Path war = Files.createTempDirectory("idemkey-two-servers").resolve("shared.war");
        Deployments.guardedApp("shared", onALongLease(Map.of())).as(ZipExporter.class).exportTo(war.toFile(), true);
        ServerProcess[] both = startBoth(kind -> ServerProcess.startForTests(kind, List.of(war)));
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
        return StatusTableTests.redisCalls();
    }
}
