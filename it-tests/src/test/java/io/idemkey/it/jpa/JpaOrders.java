package io.idemkey.it.jpa;

import io.idemkey.Idempotent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import jakarta.transaction.Transactional;

/** An {@code @Idempotent} service method that returns the entity it persisted, as services do. */
@ApplicationScoped
public class JpaOrders {

    @PersistenceContext(unitName = "charges")
    EntityManager entities;

    @Transactional
    @Idempotent(scope = "it-jpa-orders")
    public JpaOrder place(@Idempotent.Key String key, long amount) {
        JpaOrder order = new JpaOrder(key, amount);
        entities.persist(order);
        return order;
    }
}
