/**
 * <b>Internal:</b> the engine. Acquire, complete, release and renew a record through the store
 * SPI, the fingerprint, the policies, the lease ticker, the replay cache, metrics as plain
 * counters. Plain Java: no Jakarta or MicroProfile type. Public only for the packages above it;
 * may change in any release.
 */
package io.idemkey.core;
