package io.idemkey.it.app;

import jakarta.annotation.Priority;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.Provider;

/**
 * The application's own JAX-RS access control for {@code /guarded/account}: authentication before
 * Idemkey's request filter (a refused request takes no key), and an authorization check after it
 * (the key is taken, the method never starts, so the key is released).
 */
public final class AccountAccessFilters {

    private AccountAccessFilters() {
    }

    private static boolean isAccount(ContainerRequestContext request) {
        return request.getUriInfo().getPath().endsWith("guarded/account");
    }

    /** Anonymous callers get 401. */
    @Provider
    @Priority(Priorities.AUTHENTICATION)
    public static class Authentication implements ContainerRequestFilter {
        @Override
        public void filter(ContainerRequestContext request) {
            if (isAccount(request) && request.getSecurityContext().getUserPrincipal() == null) {
                request.abortWith(Response.status(401).header(HttpHeaders.WWW_AUTHENTICATE, "Basic realm=\"idemkey-tests\"")
                        .build());
            }
        }
    }

    /** bob may not use accounts: 403, decided after Idemkey has taken the key. */
    @Provider
    @Priority(Priorities.USER + 1000)
    public static class Authorization implements ContainerRequestFilter {
        @Override
        public void filter(ContainerRequestContext request) {
            if (isAccount(request) && "bob".equals(request.getSecurityContext().getUserPrincipal().getName())) {
                request.abortWith(Response.status(403).build());
            }
        }
    }
}
