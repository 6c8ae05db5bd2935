/**
 * <b>Internal:</b> the settings read from MicroProfile Config, validated once at deployment
 * ({@code idempotency.*}; a bad value is a deployment error naming the property), and each
 * method's policy resolved from its annotation and the configuration. May change in any release.
 */
package io.idemkey.config;
