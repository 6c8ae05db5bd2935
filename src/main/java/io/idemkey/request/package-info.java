/**
 * <b>Internal:</b> a guarded request as the JAX-RS filters and the CDI interceptor hand it to
 * each other ({@code CurrentRequest}, {@code GuardedRequest}), the recording of its response and
 * the rendering of a replay or a problem+json answer. Below both {@code cdi} and {@code jaxrs},
 * so that neither imports the other's pieces. May change in any release.
 */
package io.idemkey.request;
