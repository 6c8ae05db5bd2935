/**
 * <b>Internal:</b> the JAX-RS resource-method model (which methods serve which endpoints, where
 * an annotation is inherited from), shared by the configuration, the CDI extension and the JAX-RS
 * feature. May change in any release.
 */
package io.idemkey.resource;
