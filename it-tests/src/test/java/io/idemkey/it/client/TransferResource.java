package io.idemkey.it.client;

import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.json.Json;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.Response;

/**
 * The server's side of the shared contract: books each transfer in {@link Effects}. (Jersey, Payara
 * Micro's JAX-RS, wants the class's {@code @Path} on the class itself.)
 */
@Path("transfers")
@RequestScoped
public class TransferResource implements TransfersApi {

    @Inject
    Effects effects;

    @Override
    public Response transfer(String key, Transfer transfer) {
        int booked = effects.book(transfer.id);
        return Response.status(201).entity(Json.createObjectBuilder().add("id", transfer.id).add("amount", transfer.amount)
                .add("booking", booked).build().toString()).build();
    }
}
