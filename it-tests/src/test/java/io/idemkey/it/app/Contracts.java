package io.idemkey.it.app;

import io.idemkey.IdempotencyKey;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;

/**
 * Shared API contracts, as a contract-first team writes them (and a MicroProfile Rest Client would
 * use them): the JAX-RS annotations on the interface, {@code @IdempotencyKey} in each of the places
 * a team may put it. The implementations are the {@code *ContractResource} classes.
 */
public final class Contracts {

    private Contracts() {
    }

    /** {@code @IdempotencyKey} on the interface's method. */
    public interface OnInterfaceMethod {
        @POST
        @Path("/charge")
        @Consumes(MediaType.APPLICATION_JSON)
        @Produces(MediaType.APPLICATION_JSON)
        @IdempotencyKey
        String charge(@QueryParam("retryable") boolean retryable, String body);
    }

    /** {@code @IdempotencyKey} on the interface itself. */
    @IdempotencyKey
    public interface OnInterface {
        @POST
        @Path("/charge")
        @Consumes(MediaType.APPLICATION_JSON)
        @Produces(MediaType.APPLICATION_JSON)
        String charge(@QueryParam("retryable") boolean retryable, String body);
    }

    /** No {@code @IdempotencyKey} in the contract: the implementation carries it. */
    public interface Unannotated {
        @POST
        @Path("/charge")
        @Consumes(MediaType.APPLICATION_JSON)
        @Produces(MediaType.APPLICATION_JSON)
        String charge(@QueryParam("retryable") boolean retryable, String body);
    }
}
