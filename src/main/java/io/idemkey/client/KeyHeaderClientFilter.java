package io.idemkey.client;

import jakarta.ws.rs.client.ClientRequestContext;
import jakarta.ws.rs.client.ClientRequestFilter;

import java.lang.reflect.Method;
import java.util.List;

/**
 * Puts the key of the Rest Client call in progress on its request, unless the request has one
 * already (the interface method takes it as a {@code @HeaderParam("Idempotency-Key")} parameter).
 * Registered on every Rest Client whose interface carries {@code @IdempotencyKey} by
 * {@link IdempotencyRestClientListener}.
 */
public class KeyHeaderClientFilter implements ClientRequestFilter {

    /** The property MicroProfile Rest Client sets on each request: the interface method invoked. */
    static final String INVOKED_METHOD = "org.eclipse.microprofile.rest.client.invokedMethod";

    @Override
    public void filter(ClientRequestContext request) {
        ClientCalls.Call call = ClientCalls.current();
        if (call == null) {
            return;
        }
        if (request.getProperty(INVOKED_METHOD) instanceof Method invoked && !invoked.equals(call.method())) {
            return; // another client called from within this call (a filter of its own): not this call's request
        }
        // A header parameter the caller left null may still be there, empty (Jersey keeps it): replaced.
        List<String> names = request.getHeaders().keySet().stream().filter(IdempotentRequests.KEY_HEADER::equalsIgnoreCase).toList();
        boolean given = names.stream().flatMap(name -> request.getHeaders().get(name).stream())
                .anyMatch(value -> value != null && !value.toString().isBlank());
        if (!given) {
            names.forEach(request.getHeaders()::remove);
            request.getHeaders().putSingle(IdempotentRequests.KEY_HEADER, IdempotentRequests.headerValue(call.key()));
        }
    }
}
