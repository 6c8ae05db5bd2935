package io.idemkey.it;

import io.idemkey.it.app.IdempotentPayments;
import io.idemkey.it.misplaced.LocatorResource;
import io.idemkey.it.misplaced.MisplacedCalls;
import io.idemkey.it.misplaced.UnmanagedContractResource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code @IdempotencyKey} where Idemkey cannot honour it never leaves an endpoint silently unguarded:
 * the deployment fails naming the method where the server shows the class to Idemkey's CDI
 * extension, and otherwise the application's JAX-RS start fails, or every request through the
 * placement is refused. The server of this run is started here (a failed deployment must be seen),
 * with the applications whose start succeeds first.
 */
class PlacementValidationIT {

    private static ServerProcess server;

    @BeforeAll
    static void deploy() throws IOException {
        Path directory = Files.createTempDirectory("idemkey-placement-validation");
        server = ServerProcess.startForTests(ServerProcess.Kind.ofThisRun(), List.of(
                Deployments.export(directory, Deployments.guardedApp("misplaced-annotation", Map.of())
                        .addClass(LocatorResource.class).addClass(LocatorResource.Payments.class)),
                Deployments.export(directory, Deployments.guardedApp("unmanaged-interface-placement", Map.of())
                        .addClass(UnmanagedContractResource.class)),
                Deployments.export(directory, Deployments.guardedApp("misplaced-calls", Map.of())
                        .addClass(MisplacedCalls.class))));
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void annotationOnASubResourceLocatorFailsTheDeploymentOrAtLeastEveryRequestNamingTheMethod() throws Exception {
        String message = "Invalid Idemkey placement: @IdempotencyKey on " + LocatorResource.class.getName()
                + ".payments(), which is a sub-resource locator";
        if (server.kind() != ServerProcess.Kind.PAYARA) {
            // Open Liberty and WildFly show every resource class to CDI extensions: the deployment fails
            assertTrue(server.log().contains(message), server.log());
            assertEquals(404, status("misplaced-annotation", "guarded/executions?key=x"), "the application is not serving");
        } else {
            // Payara Micro shows classes without a CDI scope to no extension: the request is refused instead
            assertEquals(500, post("misplaced-annotation", "misplaced/payments"), "refused, never run unguarded");
            assertTrue(server.log().contains(message), server.log());
        }
    }

    @Test
    void interfacePlacementIsGuardedWhereCdiManagesTheClassAndFailsTheApplicationWhereItCannot() throws Exception {
        int status = status("unmanaged-interface-placement", "guarded/executions?key=x");
        if (server.kind() != ServerProcess.Kind.PAYARA) {
            assertEquals(200, status, "Open Liberty and WildFly make every resource class a CDI bean: the binding is added");
            assertEquals(400, post("unmanaged-interface-placement", "unmanaged/charge"), "guarded: no key, 400");
        } else {
            // Payara Micro shows classes without a CDI scope to no extension: its JAX-RS start fails
            assertEquals(404, status, "the application is not serving");
            await().atMost(Duration.ofSeconds(30)).until(() -> server.log().contains(
                    "Invalid Idemkey placement: @IdempotencyKey on an interface guards "
                    + UnmanagedContractResource.class.getName() + ".charge(), but CDI does not manage"));
        }
    }

    @Test
    void idempotentMethodsThatCannotBeGuardedFailTheDeploymentNamingEachMethod() throws Exception {
        String type = MisplacedCalls.class.getName();
        await().atMost(Duration.ofSeconds(30)).until(() -> server.log().contains("Invalid Idemkey placement: @Idempotent on "
                + type + ".noKey(), which has no parameter marked @Idempotent.Key"));
        String log = server.log();
        assertTrue(log.contains("@Idempotent on " + type + ".twoKeys(), which has 2 parameters marked @Idempotent.Key"), log);
        assertTrue(log.contains("@Idempotent.Key on a parameter of " + type + ".keyWithoutIdempotent(), which is not @Idempotent"), log);
        assertTrue(log.contains("@Idempotent on " + type + ".asynchronous(), which returns CompletionStage"), log);
        assertEquals(404, status("misplaced-calls", "guarded/executions?key=x"), "the application is not serving");
    }

    /** Each @Idempotent method without a scope is named at deployment, with the scope it gets; a pinned one is not. */
    @Test
    void anIdempotentMethodWhoseScopeIsNotPinnedIsWarnedOfAtDeployment() {
        String type = IdempotentPayments.class.getName();
        await().atMost(Duration.ofSeconds(30)).until(() -> server.log().contains("Idemkey: @Idempotent on " + type
                + ".notify() has no scope, so its records are kept under the scope " + type + ".notify,"));
        assertFalse(server.log().contains("@Idempotent on " + type + ".charge() has no scope"), "charge pins its scope");
    }

    private static int post(String context, String path) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(server.uri(context).resolve(path))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString("{}")).build(),
                HttpResponse.BodyHandlers.discarding()).statusCode();
    }


    private static int status(String context, String path) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(server.uri(context).resolve(path)).GET().build(),
                HttpResponse.BodyHandlers.discarding()).statusCode();
    }
}
