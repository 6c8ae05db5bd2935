/**
 * <b>SPI.</b> What a store implements: {@link io.idemkey.spi.IdempotencyStore} (an application
 * provides its own as a CDI bean with {@code idempotency.store=custom}) and the values its methods
 * take and return.
 * <p>
 * Stable like the API: within a major version a release only adds to it, and a method added to
 * {@link io.idemkey.spi.IdempotencyStore} comes with a default implementation.
 */
package io.idemkey.spi;
