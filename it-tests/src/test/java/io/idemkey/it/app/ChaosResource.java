package io.idemkey.it.app;

import io.idemkey.IdempotencyContext;
import io.idemkey.IdempotencyKey;
import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The chaos run's endpoint: takes a little while, answers 201 (or, for one key in ten, a
 * deterministic 402 business failure), and writes to the ledger as its last act.
 */
@Path("/chaos")
public class ChaosResource {

    @Inject
    Ledger ledger;

    @Inject
    IdempotencyContext idempotency;

    /** Which server process answers: its ledger id changes with every start. */
    @GET
    @Path("instance")
    @Produces(MediaType.TEXT_PLAIN)
    public String instance() {
        return ledger.instance();
    }

    @POST
    @Path("{n}")
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    @IdempotencyKey(lockTtlSeconds = 5, excludeFields = "attempt")
    public Response charge(@PathParam("n") int n, String body) throws InterruptedException {
        Thread.sleep(ThreadLocalRandom.current().nextInt(2, 25));
        String id = UUID.randomUUID().toString();
        ledger.executed(idempotency.key().orElseThrow(), id);
        if (n % 10 == 0) {
            return Response.status(402).type("application/problem+json")
                    .entity("{\"title\":\"card declined\",\"status\":402,\"id\":\"" + id + "\"}").build();
        }
        return Response.status(201).entity("{\"charge\":" + n + ",\"id\":\"" + id + "\"}").build();
    }
}
