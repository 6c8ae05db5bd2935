package io.idemkey.it;

import io.idemkey.it.redeploy.ApplicationLoader;
import io.idemkey.it.redeploy.probe.ProbeApplication;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An application undeployed from a running Open Liberty or WildFly leaves nothing of itself on the server's threads
 * after its guarded requests took every path (synchronous, {@code CompletionStage} and
 * {@code AsyncResponse} resumed on managed threads, streamed, replayed from the replay cache,
 * {@code @Idempotent}): no thread-local value of one of its classes, and no thread with its class
 * loader, so that nothing of Idemkey's keeps the old application's classes, engine or decrypted
 * replay bodies alive through a redeploy.
 *
 * <p>Whether its class loader is then collected is not asked: servers keep an undeployed
 * application for reasons of their own (WildFly's idle worker thread holds the last request it ran
 * until it runs another; Open Liberty's Jakarta Security keeps the last authenticated application in
 * a thread-local), whatever the application does. (Run in the Open Liberty and WildFly executions.)
 */
class RedeployIT {

    private static final String PROPERTY = "idemkey.test.undeployed-loader";

    private static ServerProcess server;
    private static Path directory;

    @BeforeAll
    static void start() throws IOException {
        directory = Files.createTempDirectory("idemkey-redeploy");
        WebArchive war = Deployments.guardedApp("redeploy", Map.of(
                "io.idemkey.it.app.AsyncResource/stage/IdempotencyKey/lockTtlSeconds", "1",
                "io.idemkey.it.app.AsyncResource/suspended/IdempotencyKey/lockTtlSeconds", "1"))
                .addClass(ApplicationLoader.class);
        // the probe reads the threads' thread-local maps
        server = ServerProcess.startForRedeploys(ServerProcess.Kind.ofThisRun(),
                List.of("--add-opens=java.base/java.lang=ALL-UNNAMED"), List.of(Deployments.export(directory, war)));
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void undeployedApplicationLeavesNothingOnTheServersThreadsAfterItsRequestsTookEveryPath() {
        Http http = new Http(server.uri("redeploy"));
        // asynchronous last: a thread's last guarded request is the one whose values it might keep
        for (String path : List.of("guarded/echo", "async/stream?kib=64", "async/stage", "async/suspended")) {
            for (int request = 0; request < 4; request++) { // over several of the server's threads
                String key = Http.newKey();
                HttpResponse<String> first = http.postJson(path, key, "{\"n\":1}");
                HttpResponse<String> replay = http.postJson(path, key, "{\"n\":1}");
                assertTrue(first.statusCode() < 300, path + ": " + first.statusCode() + " " + first.body());
                assertEquals("true", replay.headers().firstValue("Idempotent-Replayed").orElse(""), path + " replayed");
            }
        }
        String id = Http.newKey();
        for (int call = 0; call < 2; call++) {
            HttpResponse<String> charged = http.send(http.request("calls/charge/" + id)
                    .POST(HttpRequest.BodyPublishers.noBody()).build());
            assertEquals(200, charged.statusCode(), charged.body());
        }
        assertEquals(200, http.send(http.request("loader?property=" + PROPERTY)
                .POST(HttpRequest.BodyPublishers.noBody()).build()).statusCode());

        server.undeploy("redeploy");
        server.deploy(Deployments.export(directory,
                ShrinkWrap.create(WebArchive.class, "probe.war").addPackage(ProbeApplication.class.getPackage())));

        HttpResponse<String> held = new Http(server.uri("probe")).get("held?property=" + PROPERTY);
        assertEquals(200, held.statusCode(), held.body());
        assertTrue(held.body().equals("nothing held") || held.body().equals("nothing held: the class loader was collected"),
                held.body());
    }
}
