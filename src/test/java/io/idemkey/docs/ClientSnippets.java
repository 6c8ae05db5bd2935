package io.idemkey.docs;

import io.idemkey.IdempotencyKey;
import io.idemkey.client.IdempotentRequest;
import io.idemkey.client.IdempotentRequests;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.client.Client;
import jakarta.ws.rs.client.Entity;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.net.URI;
import org.eclipse.microprofile.rest.client.inject.RegisterRestClient;
import org.eclipse.microprofile.rest.client.inject.RestClient;

/** docs/client.md. */
class ClientSnippets {

    record Transfer(String id, long cents) {}

    record Payment(String account, long cents) {}

    interface Bookings {
        String book(Transfer transfer);
    }

    Bookings bookings;

    // tag::rest-client[]
    @Path("transfers")
    @RegisterRestClient(configKey = "transfers")
    public interface TransfersApi {
        @POST
        @IdempotencyKey
        Response transfer(@HeaderParam("Idempotency-Key") String key, Transfer transfer); // key: null for a new one
    }

    @Path("transfers") @RequestScoped                               // (Jersey wants the class's @Path on the class)
    public class TransferResource implements TransfersApi {          // the server: guarded by the same annotation
        public Response transfer(String key, Transfer transfer) {
            return Response.ok(bookings.book(transfer)).build();
        }
    }

    public class Caller {
        @Inject @RestClient TransfersApi transfers;                  // a caller: retried safely

        boolean book() {
            Response booked = transfers.transfer(null, new Transfer("t-42", 100));
            return IdempotentRequests.replayed(booked);              // Idempotent-Replayed: true
        }
    }
    // end::rest-client[]

    Response charge(Client client, URI base, Payment payment) {
        // tag::jaxrs-client[]
        IdempotentRequests requests = IdempotentRequests.create();      // policy: idempotency.client.* (MP Config)
        IdempotentRequest charge = requests.to(client.target(base).path("payments"))
                .accept(MediaType.APPLICATION_JSON);                     // .key(k) to reuse an operation's key
        Response response = charge.post(Entity.json(payment));           // or charge.post(entity, Receipt.class)
        // end::jaxrs-client[]
        return response;
    }
}
