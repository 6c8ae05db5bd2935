/**
 * <b>Internal:</b> the store's readiness check, used where the server has MicroProfile Health.
 * May change in any release.
 */
package io.idemkey.health;
