package io.idemkey.it.app;

import jakarta.annotation.Priority;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerResponseContext;
import jakarta.ws.rs.container.ContainerResponseFilter;
import jakarta.ws.rs.ext.Provider;

/** An application response filter that fails when asked to (header X-Fail-Response): no response gets written. */
@Provider
@Priority(9000)
public class FailingResponseFilter implements ContainerResponseFilter {
    @Override
    public void filter(ContainerRequestContext request, ContainerResponseContext response) {
        if (request.getHeaderString("X-Fail-Response") != null) {
            throw new IllegalStateException("the response filter failed");
        }
    }
}
