package io.idemkey.it.client;

import jakarta.enterprise.context.ApplicationScoped;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/** How many times each transfer took effect on this server. */
@ApplicationScoped
public class Effects {

    private final Map<String, AtomicInteger> bookings = new ConcurrentHashMap<>();

    int book(String id) {
        return bookings.computeIfAbsent(id, i -> new AtomicInteger()).incrementAndGet();
    }

    Map<String, AtomicInteger> all() {
        return bookings;
    }
}
