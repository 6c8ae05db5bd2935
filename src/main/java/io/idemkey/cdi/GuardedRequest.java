package io.idemkey.cdi;

import io.idemkey.core.Execution;
import jakarta.ws.rs.ext.Providers;

import java.lang.reflect.Method;

/**
 * What the interceptor needs to know about the current guarded request, handed over by the request
 * filter in one piece (one call through the request-scoped proxy instead of several).
 *
 * @param execution      the execution holding the key
 * @param resourceMethod the guarded resource method: only its invocation starts the execution
 * @param providers      the application's JAX-RS providers, to tell mapped exceptions from unmapped ones
 */
public record GuardedRequest(Execution execution, Method resourceMethod, Providers providers) {
}
