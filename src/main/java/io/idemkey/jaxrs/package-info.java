/**
 * <b>Internal:</b> the JAX-RS glue: a dynamic feature that binds the request filter, the response
 * filter and the writer interceptor to every {@code @IdempotencyKey} resource method. May change
 * in any release.
 */
package io.idemkey.jaxrs;
