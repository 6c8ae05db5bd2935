package io.idemkey.it;

import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.as.arquillian.container.ManagementClient;
import org.jboss.dmr.ModelNode;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * WildFly suspends its container before it stops (graceful shutdown, or {@code :suspend} from
 * jboss-cli): it lets the requests in flight finish and refuses new ones, and its managed executors
 * refuse to run scheduled tasks. Idemkey's background work runs on a pool of its own on the managed
 * thread factory's threads: a request WildFly is still draining keeps its lease while the server is
 * suspended, nothing fills the log with errors, and leases are renewed after it resumes.
 */
@RunAsClient
class WildFlySuspendIT extends ClientOfOneDeployment {

    @ArquillianResource
    ManagementClient management;

    @Deployment
    static WebArchive deployment() {
        return Deployments.guardedApp("suspend", Map.of());
    }

    @Test
    void aRequestDrainedWhileSuspendedKeepsItsLeaseNothingIsLoggedAndLeasesAreRenewedAfterTheResume() throws Exception {
        Path log = Path.of(System.getProperty("wildfly.home"), "standalone", "log", "server.log");
        long logBefore = Files.size(log);

        String drained = Http.newKey();
        CompletableFuture<HttpResponse<String>> inFlight = CompletableFuture.supplyAsync(() ->
                http.post("guarded/slow?millis=3000", drained));
        http.awaitExecution(drained);
        operation("suspend");
        TestRedis.awaitLeaseRunOutStillInProgress(drained); // past its 1 s lease, suspended: only a renewal keeps it
        assertEquals(200, inFlight.get().statusCode(), "the request in flight was drained");
        operation("resume");

        String key = Http.newKey();
        CompletableFuture<HttpResponse<String>> first = CompletableFuture.supplyAsync(() ->
                http.post("guarded/slow?millis=3000", key));
        http.awaitExecution(key);
        TestRedis.awaitLeaseRunOutStillInProgress(key); // past the 1 s lease: only a renewal keeps it
        assertEquals(409, http.post("guarded/slow?millis=3000", key).statusCode(),
                "the lease of the running request was renewed after the resume");
        assertEquals(200, first.get().statusCode());

        List<String> errors = newLines(log, logBefore).stream()
                .filter(line -> line.contains(" ERROR ") || line.contains("WFLYEE0111")).toList();
        assertEquals(List.of(), errors, "errors logged while the server was suspended");
    }

    private void operation(String name) throws IOException {
        ModelNode operation = new ModelNode();
        operation.get("operation").set(name);
        operation.get("address").setEmptyList();
        ModelNode result = management.getControllerClient().execute(operation);
        assertEquals("success", result.get("outcome").asString(), result.toString());
    }

    private static List<String> newLines(Path log, long from) throws IOException {
        byte[] all = Files.readAllBytes(log);
        return new String(all, (int) Math.min(from, all.length), (int) Math.max(0, all.length - from), StandardCharsets.UTF_8)
                .lines().toList();
    }
}
