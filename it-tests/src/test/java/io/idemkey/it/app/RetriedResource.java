package io.idemkey.it.app;

import io.idemkey.IdempotencyKey;
import jakarta.enterprise.context.RequestScoped;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.faulttolerance.Fallback;
import org.eclipse.microprofile.faulttolerance.Retry;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Guarded methods that MicroProfile Fault Tolerance invokes again ({@code @Retry}): each counts its
 * attempts per key. {@code recovers} fails its first attempt with an exception no mapper handles,
 * {@code mapped} with a 503 the runtime maps (and its next attempt takes {@code sleep} ms),
 * {@code never} fails every attempt, {@code fallback} too, and then answers with its fallback.
 */
@Path("/retried")
@RequestScoped
@Produces(MediaType.APPLICATION_JSON)
public class RetriedResource {

    private static final Map<String, AtomicInteger> ATTEMPTS = new ConcurrentHashMap<>();

    public record Outcome(String key, int attempt) {
    }

    @POST
    @Path("/recovers")
    @IdempotencyKey
    @Retry(maxRetries = 3, delay = 0, jitter = 0)
    public Response recovers(@HeaderParam("Idempotency-Key") String key) {
        int attempt = attempt(key);
        if (attempt == 1) {
            throw new IllegalStateException("the first attempt fails");
        }
        return Response.status(201).entity(new Outcome(key, attempt)).build();
    }

    @POST
    @Path("/mapped")
    @IdempotencyKey(lockTtlSeconds = 1)
    @Retry(maxRetries = 3, delay = 0, jitter = 0)
    public Response mapped(@HeaderParam("Idempotency-Key") String key, @QueryParam("sleep") long sleepMillis)
            throws InterruptedException {
        int attempt = attempt(key);
        if (attempt == 1) {
            throw new WebApplicationException(Response.status(503).build());
        }
        Thread.sleep(sleepMillis);
        return Response.status(201).entity(new Outcome(key, attempt)).build();
    }

    @POST
    @Path("/never")
    @IdempotencyKey
    @Retry(maxRetries = 2, delay = 0, jitter = 0)
    public Response never(@HeaderParam("Idempotency-Key") String key) {
        throw new IllegalStateException("attempt " + attempt(key) + " fails");
    }

    @POST
    @Path("/fallback")
    @IdempotencyKey
    @Retry(maxRetries = 1, delay = 0, jitter = 0)
    @Fallback(fallbackMethod = "answerAnyway")
    public Response fallback(@HeaderParam("Idempotency-Key") String key) {
        throw new IllegalStateException("attempt " + attempt(key) + " fails");
    }

    public Response answerAnyway(String key) {
        return Response.ok(new Outcome(key, 0)).build();
    }

    @GET
    @Path("/attempts")
    public int attempts(@QueryParam("key") String key) {
        AtomicInteger attempts = ATTEMPTS.get(key);
        return attempts == null ? 0 : attempts.get();
    }

    private static int attempt(String key) {
        return ATTEMPTS.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
    }
}
