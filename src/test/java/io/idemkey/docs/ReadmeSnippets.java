package io.idemkey.docs;

import io.idemkey.IdempotencyKey;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;

/** README's example. */
class ReadmeSnippets {

    record Order(String id, String item) {}

    interface OrderBook {
        Order place(Order order);
    }

    OrderBook orders;

    // tag::orders-resource[]
    @Path("/orders")
    public class OrderResource {
        @POST
        @IdempotencyKey                          // at most once per Idempotency-Key
        public Order place(Order order) {
            return orders.place(order);          // a retry gets this answer again
        }
    }
    // end::orders-resource[]
}
