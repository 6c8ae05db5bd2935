/**
 * <b>Internal:</b> the Redis store ({@code idempotency.store=redis}, the default): standalone,
 * Sentinel or Cluster through Jedis, one Lua script per operation (an acquire without a rate limit:
 * one atomic {@code SET}; a completion, where Redis has it, one {@code SET ... IFEQ}). Besides this
 * package, the library names a Jedis type in one place: {@code io.idemkey.config} reads the
 * Redis store's nodes as Jedis's {@code HostAndPort}, and only after it has found Jedis on the
 * class path; {@code io.idemkey.cdi} and {@code io.idemkey.admin.cli} use this package's classes only
 * for a Redis store. So an application that uses another store may leave Jedis out of its WAR.
 * Chosen by configuration, never used by name; may change in any release.
 */
package io.idemkey.store.redis;
