package io.idemkey.it;

import org.jboss.shrinkwrap.api.exporter.ZipExporter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The mixed pair: a WildFly (stock {@code standalone-microprofile.xml}, the WAR copied into its
 * {@code deployments} directory) and a Payara Micro 6 on one Redis, the same application unchanged
 * on both. (Starts both servers itself, beside the WildFly execution's Arquillian-managed one.)
 */
class WildFlyTwoServersIT extends TwoServersTests {

    private static ServerProcess payara;
    private static ServerProcess wildfly;

    @BeforeAll
    static void start() throws Exception {
        Path war = Files.createTempDirectory("idemkey-two-servers").resolve("shared.war");
        Deployments.guardedApp("shared", Map.of()).as(ZipExporter.class).exportTo(war.toFile(), true);
        CompletableFuture<ServerProcess> startingPayara = CompletableFuture.supplyAsync(() ->
                ServerProcess.startForTests(ServerProcess.Kind.PAYARA, List.of(war)));
        try {
            wildfly = ServerProcess.startForTests(ServerProcess.Kind.WILDFLY, List.of(war));
        } finally {
            payara = startingPayara.get();
        }
    }

    @AfterAll
    static void stop() {
        if (payara != null) {
            payara.close();
        }
        if (wildfly != null) {
            wildfly.close();
        }
    }

    @Override
    ServerProcess payara() {
        return payara;
    }

    @Override
    ServerProcess other() {
        return wildfly;
    }

    @Override
    StatusTableTests.StoreCalls countStoreCalls() {
        return StatusTableTests.redisCalls();
    }
}
