package io.idemkey.it;

import io.idemkey.testing.RedisServer;

/** The private Redis of this test JVM, shared by the deployments (started on first use). */
public final class TestRedis {

    private static RedisServer server;

    private TestRedis() {
    }

    public static synchronized RedisServer get() {
        if (server == null) {
            server = RedisServer.start();
        }
        return server;
    }
}
