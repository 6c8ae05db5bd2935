package io.idemkey.sample;

import io.idemkey.FailureMode;
import io.idemkey.IdempotencyKey;
import jakarta.inject.Inject;
import jakarta.json.Json;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotNull;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.NotFoundException;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.UriInfo;

/**
 * Payments: charging fails closed (no Redis, no charge: 503) and ignores the fields that change on
 * every client retry; a refund larger than what is left is a deterministic 422, recorded and
 * replayed like a success.
 */
@Path("/payments")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class PaymentResource {

    @Inject
    PaymentGateway gateway;

    @POST
    @IdempotencyKey(ttlHours = 48, lockTtlSeconds = 60, failureMode = FailureMode.CLOSED,
            excludeFields = {"clientTimestamp", "requestNonce"})
    public Response charge(@Valid @NotNull PaymentRequest request, @Context UriInfo uri) {
        Payment payment = gateway.charge(request);
        return Response.created(uri.getAbsolutePathBuilder().path(payment.id()).build()).entity(payment).build();
    }

    @GET
    @Path("{id}")
    public Payment get(@PathParam("id") String id) {
        return gateway.find(id).orElseThrow(NotFoundException::new);
    }

    @POST
    @Path("{id}/refunds")
    @IdempotencyKey
    public Response refund(@PathParam("id") String id, @Valid @NotNull RefundRequest request) {
        Payment payment = gateway.find(id).orElseThrow(NotFoundException::new);
        return gateway.refund(id, request.amountCents())
                .map(refunded -> Response.status(201).entity(refunded).build())
                .orElseGet(() -> Response.status(422, "Unprocessable Content").type("application/problem+json").entity(Json.createObjectBuilder()
                        .add("title", "Refund exceeds the payment")
                        .add("status", 422)
                        .add("detail", "Payment " + id + " has " + (payment.amountCents() - payment.refundedCents())
                                + " cents left to refund; " + request.amountCents() + " were asked for.")
                        .build().toString()).build());
    }
}
