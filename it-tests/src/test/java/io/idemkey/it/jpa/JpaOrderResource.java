package io.idemkey.it.jpa;

import io.idemkey.IdempotencyKey;
import io.idemkey.it.app.HaltAfterCommit;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import jakarta.transaction.Transactional;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.NotFoundException;
import jakarta.ws.rs.PATCH;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import javax.naming.NamingException;

/**
 * Orders created and updated the way JPA applications write it: the method returns the managed
 * entity, whose generated id, version and callback timestamps the provider sets as the transaction
 * flushes, after the method returned; a response filter ({@link OrderETags}) adds the version as the
 * {@code ETag} after the commit. Without {@code flush()}. {@code X-Then: crash} (not fingerprinted)
 * halts the server right after the create's commit.
 */
@Path("jpa/orders")
@RequestScoped
@Produces(MediaType.APPLICATION_JSON)
public class JpaOrderResource {

    @PersistenceContext(unitName = "charges")
    EntityManager entities;

    @Inject
    JpaOrders orders;

    @POST
    @Transactional
    @IdempotencyKey
    public Response create(@HeaderParam("Idempotency-Key") String key, @QueryParam("amount") long amount,
                           @HeaderParam("X-Then") String then) throws NamingException {
        JpaOrder order = new JpaOrder(key, amount);
        entities.persist(order);
        if ("crash".equals(then)) {
            HaltAfterCommit.register();
        }
        return Response.status(201).entity(order).build();
    }

    @PATCH
    @Path("{id}")
    @Transactional
    @IdempotencyKey
    public JpaOrder amend(@PathParam("id") long id, @QueryParam("note") String note) {
        JpaOrder order = entities.find(JpaOrder.class, id);
        if (order == null) {
            throw new NotFoundException();
        }
        order.setNote(note);
        return order;
    }

    /** Not guarded itself: it calls the {@code @Idempotent} service and answers what it returned. */
    @POST
    @Path("placed/{key}")
    public JpaOrder place(@PathParam("key") String key, @QueryParam("amount") long amount) {
        return orders.place(key, amount);
    }
}
