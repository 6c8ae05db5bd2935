package io.idemkey.it;

/**
 * The client's core ({@link ClientRetriesTests}) on WildFly 39's stock {@code standalone-microprofile.xml}:
 * its MicroProfile Rest Client 4 (RESTEasy's), found Idemkey's {@code RestClientListener} in the
 * application and runs Idemkey's interceptor on the shared interface's {@code @IdempotencyKey}
 * method; and its JAX-RS client under {@code IdempotentRequests}. The lossy network and the Redis
 * outages stay with {@link ClientRetriesIT} (Payara Micro, Open Liberty).
 */
class WildFlyRestClientIT extends ClientRetriesTests {
}
