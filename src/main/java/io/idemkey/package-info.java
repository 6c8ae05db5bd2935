/**
 * <b>API.</b> What applications touch: {@link io.idemkey.IdempotencyKey} on JAX-RS resource methods,
 * {@link io.idemkey.Idempotent} on CDI bean methods (message listeners, jobs), {@link io.idemkey.Idempotency}
 * for idempotent calls in code, {@link io.idemkey.IdempotencyContext} inside a guarded method,
 * {@link io.idemkey.FailureMode} and {@link io.idemkey.IdempotencyException}.
 * <p>
 * Stable: within a major version a release only adds to it; the build checks this against the
 * last release (japicmp, {@code docs/CHANGELOG.md}).
 */
package io.idemkey;
