/**
 * <b>Internal:</b> the Redis store ({@code idempotency.store=redis}, the default): standalone,
 * Sentinel or Cluster through Jedis, one Lua script per operation (an acquire without a rate limit:
 * one atomic {@code SET}; a completion, where Redis has it, one {@code SET ... IFEQ}). The only package that uses
 * Jedis: an application that uses another store may leave Jedis out of its WAR. Chosen by
 * configuration, never used by name; may change in any release.
 */
package io.idemkey.store.redis;
