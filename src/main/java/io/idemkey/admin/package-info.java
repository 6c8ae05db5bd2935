/**
 * The operators' admin API over HTTP: look up a key, purge one, list the keys stuck in
 * progress, for callers in the configured role only, and only in an application that turned it on
 * ({@code idempotency.admin.enabled}). Glue: the work is {@link io.idemkey.core.RecordAdmin}'s.
 */
package io.idemkey.admin;
