/**
 * <b>Internal:</b> the JDBC store ({@code idempotency.store=jdbc}): a table in the application's
 * database (PostgreSQL, MariaDB), joined to the application's transaction for exactly-once
 * effects. Chosen by configuration, never used by name; may change in any release.
 */
package io.idemkey.store.jdbc;
