/**
 * <b>Internal:</b> the CDI glue: the portable extension that finds and validates every guarded
 * method at deployment, the interceptors, the runtime bean that builds the engine and the store,
 * and the transaction hand-off. Public only where CDI requires it; may change in any release.
 */
package io.idemkey.cdi;
