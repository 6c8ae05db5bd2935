/**
 * <b>Internal:</b> the engine's counters exported to MicroProfile Metrics, where the server has
 * it. May change in any release.
 */
package io.idemkey.metrics;
