package io.idemkey.docs;

import io.idemkey.IdempotencyKey;
import jakarta.validation.Valid;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.UriInfo;

/** docs/getting-started.md. */
class GettingStartedSnippets {

    record PaymentRequest(String account, long cents, String clientTimestamp, String requestNonce) {}

    record Payment(String id, long cents) {}

    interface Gateway {
        Payment charge(PaymentRequest request);
    }

    Gateway gateway;

    // tag::payment-resource[]
    @Path("/payments")
    public class PaymentResource {
        @POST
        @IdempotencyKey(ttlHours = 48, lockTtlSeconds = 60, excludeFields = {"clientTimestamp", "requestNonce"})
        public Response charge(@Valid PaymentRequest request, @Context UriInfo uri) {
            Payment payment = gateway.charge(request);               // at most once per key (see below)
            return Response.created(uri.getAbsolutePathBuilder().path(payment.id()).build()).entity(payment).build();
        }
    }
    // end::payment-resource[]
}
