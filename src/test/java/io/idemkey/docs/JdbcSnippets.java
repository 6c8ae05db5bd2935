package io.idemkey.docs;

import io.idemkey.IdempotencyKey;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Named;
import jakarta.transaction.Transactional;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.UriInfo;

import javax.naming.InitialContext;
import javax.naming.NamingException;
import javax.sql.DataSource;

/** docs/jdbc.md. */
class JdbcSnippets {

    record OrderRequest(String item, int quantity) {}

    record Order(String id) {}

    interface Orders {
        Order insert(OrderRequest request);
    }

    Orders orders;

    // tag::exactly-once[]
    @POST
    @IdempotencyKey
    @Transactional
    public Response place(OrderRequest request, @Context UriInfo uri) {
        Order order = orders.insert(request);                     // through jdbc/orders (or JPA on it)
        return Response.created(uri.getAbsolutePathBuilder().path(order.id()).build()).entity(order).build();
    }
    // end::exactly-once[]

    // tag::datasource-bean[]
    @ApplicationScoped
    public static class OrdersDataSource {

        @Produces
        @Named("orders")
        @ApplicationScoped
        DataSource orders() throws NamingException {
            return InitialContext.doLookup("jdbc/orders");
        }
    }
    // end::datasource-bean[]
}
