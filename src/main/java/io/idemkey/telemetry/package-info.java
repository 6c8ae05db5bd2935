/**
 * <b>Internal:</b> the decision recorded on the current span, where the server has MicroProfile
 * Telemetry (OpenTelemetry). May change in any release.
 */
package io.idemkey.telemetry;
