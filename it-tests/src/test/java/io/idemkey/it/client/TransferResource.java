package io.idemkey.it.client;

import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.json.Json;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.ServiceUnavailableException;
import jakarta.ws.rs.core.Response;

/**
 * The server's side of the shared contract: books each transfer in {@link Effects}. (Jersey, Payara
 * Micro's JAX-RS, wants the class's {@code @Path} on the class itself.) A transfer whose id starts
 * with {@value #FAILS_AFTER_BOOKING} is booked and then fails (500: an exception no mapper handles),
 * one starting with {@value #UNAVAILABLE_AFTER_BOOKING} is booked and then answered 503 by the
 * application itself: either way the server releases the key, and a retry books it again.
 */
@Path("transfers")
@RequestScoped
public class TransferResource implements TransfersApi {

    public static final String FAILS_AFTER_BOOKING = "fails-after-booking-";
    public static final String UNAVAILABLE_AFTER_BOOKING = "unavailable-after-booking-";

    @Inject
    Effects effects;

    @Override
    public Response transfer(String key, Transfer transfer) {
        int booked = effects.book(transfer.id);
        if (transfer.id.startsWith(FAILS_AFTER_BOOKING)) {
            throw new IllegalStateException("booked " + transfer.id + ", then failed to write the receipt");
        }
        if (transfer.id.startsWith(UNAVAILABLE_AFTER_BOOKING)) {
            throw new ServiceUnavailableException("booked " + transfer.id + ", then the ledger's replica was away");
        }
        return Response.status(201).entity(Json.createObjectBuilder().add("id", transfer.id).add("amount", transfer.amount)
                .add("booking", booked).build().toString()).build();
    }
}
