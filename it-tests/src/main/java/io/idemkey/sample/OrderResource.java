package io.idemkey.sample;

import io.idemkey.IdempotencyKey;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;
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

import java.util.Collection;

/**
 * Orders: placing one is guarded, so a retried POST never places a second order. It runs in a
 * transaction: in the PostgreSQL mode the order row and Idemkey's record commit together, so even a
 * crash right after the commit cannot place a second order.
 */
@Path("/orders")
@Produces(MediaType.APPLICATION_JSON)
public class OrderResource {

    @Inject
    OrderBook orders;

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    @IdempotencyKey
    @Transactional
    public Response place(@Valid @NotNull OrderRequest request, @Context UriInfo uri) {
        Order order = orders.place(request);
        return Response.created(uri.getAbsolutePathBuilder().path(order.id()).build()).entity(order).build();
    }

    @GET
    @Path("{id}")
    public Order get(@PathParam("id") String id) {
        return orders.find(id).orElseThrow(NotFoundException::new);
    }

    @GET
    public Collection<Order> list() {
        return orders.all();
    }
}
