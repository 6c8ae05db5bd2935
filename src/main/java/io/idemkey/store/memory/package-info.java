/**
 * <b>Internal:</b> the in-memory store ({@code idempotency.store=memory}: one instance, nothing
 * survives a restart). Chosen by configuration, never used by name; may change in any release.
 */
package io.idemkey.store.memory;
