package io.idemkey.sample;

import jakarta.enterprise.context.ApplicationScoped;

import java.time.Instant;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/** The sample's order storage (in memory: the point is the idempotency, not the database). */
@ApplicationScoped
public class OrderBook {

    private final AtomicLong sequence = new AtomicLong();
    private final Map<String, Order> orders = new ConcurrentHashMap<>();

    public Order place(OrderRequest request) {
        Order order = new Order("ord_" + sequence.incrementAndGet(), request.item(), request.quantity(), Instant.now());
        orders.put(order.id(), order);
        return order;
    }

    public Optional<Order> find(String id) {
        return Optional.ofNullable(orders.get(id));
    }

    public Collection<Order> all() {
        return orders.values();
    }
}
