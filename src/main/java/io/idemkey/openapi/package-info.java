/**
 * <b>Internal:</b> the {@code Idempotency-Key} header and the answers of every guarded operation
 * added to the application's OpenAPI document, where the server has MicroProfile OpenAPI. May
 * change in any release.
 */
package io.idemkey.openapi;
