package io.idemkey.it.jpa;

import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerResponseContext;
import jakarta.ws.rs.container.ContainerResponseFilter;
import jakarta.ws.rs.core.EntityTag;
import jakarta.ws.rs.ext.Provider;

/**
 * A response filter as applications write them for optimistic locking: the order's version as its
 * {@code ETag}, set after the resource method returned and its transaction committed.
 */
@Provider
public class OrderETags implements ContainerResponseFilter {

    @Override
    public void filter(ContainerRequestContext request, ContainerResponseContext response) {
        if (response.getEntity() instanceof JpaOrder order && order.getVersion() != null) {
            response.getHeaders().putSingle("ETag", new EntityTag(order.getId() + "-" + order.getVersion()));
        }
    }
}
