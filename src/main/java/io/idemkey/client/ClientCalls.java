package io.idemkey.client;

import java.lang.reflect.Method;

/**
 * The Rest Client call in progress on this thread: the interceptor that retries it sets it around
 * each attempt, the request filter puts its key on the request. (MicroProfile Rest Client runs the
 * filters of a synchronous call on the calling thread.)
 */
final class ClientCalls {

    /** A call of an interface method, with the key of all its attempts. */
    record Call(Method method, String key) {
    }

    private static final ThreadLocal<Call> CURRENT = new ThreadLocal<>();

    private ClientCalls() {
    }

    static Call current() {
        return CURRENT.get();
    }

    /** Sets the call for one attempt; returns the one it replaces (to put back). */
    static Call enter(Call call) {
        Call outer = CURRENT.get();
        CURRENT.set(call);
        return outer;
    }

    static void exit(Call outer) {
        if (outer == null) {
            CURRENT.remove();
        } else {
            CURRENT.set(outer);
        }
    }
}
