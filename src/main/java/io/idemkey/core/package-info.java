/**
 * <b>Internal:</b> the engine. Acquire, complete, release and renew a record through the store
 * SPI, the fingerprint, the policies, the lease ticker, the replay cache, metrics as plain
 * counters. Plain Java and JSON-P/JSON-B (the canonical fingerprint, recorded results): no CDI,
 * JAX-RS or MicroProfile type. Public only for the packages above it; may change in any release.
 */
package io.idemkey.core;
