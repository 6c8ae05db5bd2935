package io.idemkey.it.app;

import io.idemkey.IdempotencyContext;
import io.idemkey.IdempotencyKey;
import jakarta.annotation.Resource;
import jakarta.enterprise.concurrent.ManagedExecutorService;
import jakarta.inject.Inject;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.DefaultValue;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.container.AsyncResponse;
import jakarta.ws.rs.container.Suspended;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.StreamingOutput;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/** Asynchronous and streaming responses under a key. */
@Path("/async")
@Produces(MediaType.APPLICATION_JSON)
public class AsyncResource {

    @Inject
    Executions executions;

    @Inject
    IdempotencyContext idempotency;

    @Resource
    ManagedExecutorService executor;

    @POST
    @Path("/stage")
    @IdempotencyKey
    public CompletionStage<Response> stage(@QueryParam("millis") @DefaultValue("100") int millis) {
        String key = idempotency.key().orElseThrow();
        return CompletableFuture.supplyAsync(() -> {
            int execution = executions.record(key);
            pause(millis);
            return Response.status(201).entity(body(execution)).build();
        }, executor);
    }

    @POST
    @Path("/stage-fails")
    @IdempotencyKey
    public CompletionStage<Response> stageFails() {
        String key = idempotency.key().orElseThrow();
        return CompletableFuture.supplyAsync(() -> {
            executions.record(key);
            throw new IllegalStateException("the downstream call failed");
        }, executor);
    }

    @POST
    @Path("/suspended")
    @IdempotencyKey
    public void suspended(@Suspended AsyncResponse response, @QueryParam("millis") @DefaultValue("100") int millis) {
        String key = idempotency.key().orElseThrow();
        executor.execute(() -> {
            int execution = executions.record(key);
            pause(millis);
            response.resume(Response.status(201).entity(body(execution)).build());
        });
    }

    @POST
    @Path("/suspended-fails")
    @IdempotencyKey
    public void suspendedFails(@Suspended AsyncResponse response) {
        String key = idempotency.key().orElseThrow();
        executor.execute(() -> {
            executions.record(key);
            response.resume(new IllegalStateException("the downstream call failed"));
        });
    }

    /** Streams its body in chunks, flushing between them, pausing as long as asked after each. */
    @POST
    @Path("/stream")
    @IdempotencyKey
    public Response stream(@QueryParam("kib") int kib, @QueryParam("pauseMillis") int pauseMillis) {
        int execution = executions.record(idempotency.key().orElseThrow());
        String id = UUID.randomUUID().toString();
        StreamingOutput output = out -> {
            out.write(("{\"execution\":" + execution + ",\"id\":\"" + id + "\",\"data\":\"").getBytes(StandardCharsets.UTF_8));
            byte[] chunk = new byte[1024];
            for (int i = 0; i < kib; i++) {
                Arrays.fill(chunk, (byte) ('a' + (i + execution) % 26));
                out.write(chunk);
                out.flush();
                pause(pauseMillis);
            }
            out.write("\"}".getBytes(StandardCharsets.UTF_8));
        };
        return Response.ok(output).build();
    }

    private static String body(int execution) {
        return "{\"execution\":" + execution + ",\"id\":\"" + UUID.randomUUID() + "\"}";
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
