/**
 * <b>API</b> (client side): safe retries with one {@code Idempotency-Key} per logical call, for the
 * JAX-RS Client API ({@link io.idemkey.client.IdempotentRequests}, {@link io.idemkey.client.IdempotentRequest},
 * {@link io.idemkey.client.RetryPolicy}) and for MicroProfile Rest Client interfaces carrying
 * {@code @IdempotencyKey}; the calls end in {@link io.idemkey.client.IdempotentCallException} and its
 * subclasses, with the server's {@link io.idemkey.client.Problem}.
 * <p>
 * Stable like {@code io.idemkey}, except three types that are public only because the platform finds or calls
 * them, and are <b>internal</b>: {@link io.idemkey.client.IdempotencyRestClientListener} (named in
 * {@code META-INF/services}), {@link io.idemkey.client.KeyHeaderClientFilter} and
 * {@link io.idemkey.client.RestClientRetries}. Applications do not use them; they may change in any
 * release.
 */
package io.idemkey.client;
