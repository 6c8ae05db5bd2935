package io.idemkey.jaxrs;

import io.idemkey.request.Problems;
import io.idemkey.cdi.IdempotencyExtension;
import jakarta.annotation.Priority;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.ext.Provider;

import java.lang.reflect.Method;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Logger;

/**
 * The net under a placement Idemkey cannot honour: {@code @IdempotencyKey} on a sub-resource
 * locator (the methods of the resource it returns are not guarded by it). Deployment fails for it
 * where CDI shows the class to Idemkey's extension; Payara Micro shows it no class without a CDI
 * scope, so a request that reaches a sub-resource through such a locator is refused here (500, and
 * a SEVERE line naming the method) instead of running unguarded. Requests that match one resource
 * only (the rest) cost one list lookup.
 */
@Provider
@Priority(Priorities.AUTHENTICATION - 100)
public class MisplacedLocatorFilter implements ContainerRequestFilter {

    private static final Logger LOG = Logger.getLogger(MisplacedLocatorFilter.class.getName());

    private final Map<Class<?>, Optional<String>> checked = new ConcurrentHashMap<>();

    @Override
    public void filter(ContainerRequestContext request) {
        List<Object> matched = request.getUriInfo().getMatchedResources();
        for (int i = 1; i < matched.size(); i++) { // the first is the resource itself, the rest led to it
            Optional<String> problem = checked.computeIfAbsent(userClass(matched.get(i).getClass()),
                    MisplacedLocatorFilter::annotatedLocator);
            if (problem.isPresent()) {
                LOG.severe(problem.get());
                request.abortWith(new Problems().problem(Problems.Type.MISCONFIGURED, "This endpoint's idempotency"
                        + " protection is misconfigured, so the request was not processed. The server log names the cause."));
                return;
            }
        }
    }

    /** The first locator of the class whose annotation cannot be honoured, as the deployment check words it. */
    private static Optional<String> annotatedLocator(Class<?> type) {
        for (Method method : type.getMethods()) {
            if (method.isAnnotationPresent(Path.class)) {
                Optional<String> problem = IdempotencyExtension.misplaced(type, method);
                if (problem.isPresent()) {
                    return Optional.of("Invalid Idemkey placement: " + problem.get()
                            + " Requests through it are refused, never run unguarded.");
                }
            }
        }
        return Optional.empty();
    }

    /** The application's class behind a CDI client proxy or subclass. */
    private static Class<?> userClass(Class<?> type) {
        Class<?> user = type;
        while (user.getSuperclass() != null && user.getSuperclass() != Object.class && user.getName().contains("$")
                && (user.isSynthetic() || user.getName().contains("Proxy") || user.getName().contains("Weld"))) {
            user = user.getSuperclass();
        }
        return user;
    }
}
