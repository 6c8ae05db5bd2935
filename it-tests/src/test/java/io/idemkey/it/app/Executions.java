package io.idemkey.it.app;

import jakarta.enterprise.context.ApplicationScoped;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/** How many times each key's method body ran on this server: the number the tests care about. */
@ApplicationScoped
public class Executions {

    private final Map<String, AtomicInteger> counts = new ConcurrentHashMap<>();

    public int record(String key) {
        return counts.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
    }

    public int count(String key) {
        AtomicInteger count = counts.get(key);
        return count == null ? 0 : count.get();
    }
}
