package io.idemkey.sample;

import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.config.inject.ConfigProperty;

import javax.naming.InitialContext;
import javax.naming.NamingException;
import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The sample's orders: in memory by default, or rows of the table {@code orders} in the DataSource
 * named by {@code sample.orders.datasource} (the PostgreSQL mode, where Idemkey's records live in
 * the same database and commit in the same transaction as the order).
 */
@ApplicationScoped
public class OrderBook {

    @Inject
    @ConfigProperty(name = "sample.orders.datasource")
    Optional<String> dataSourceName;

    private DataSource dataSource;
    private final AtomicLong sequence = new AtomicLong();
    private final Map<String, Order> orders = new ConcurrentHashMap<>();

    @PostConstruct
    void open() {
        if (dataSourceName.isEmpty()) {
            return;
        }
        try {
            dataSource = (DataSource) new InitialContext().lookup(dataSourceName.get());
            try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement()) {
                statement.execute("CREATE SEQUENCE IF NOT EXISTS order_ids;"
                        + " CREATE TABLE IF NOT EXISTS orders (id TEXT PRIMARY KEY, item TEXT NOT NULL,"
                        + " quantity INTEGER NOT NULL, created_at TIMESTAMPTZ NOT NULL)");
            }
        } catch (NamingException | SQLException e) {
            throw new IllegalStateException("The orders' DataSource " + dataSourceName.get() + " is not usable: " + e, e);
        }
    }

    /** Places an order; in the PostgreSQL mode, in the caller's transaction. */
    public Order place(OrderRequest request) {
        if (dataSource == null) {
            Order order = new Order("ord_" + sequence.incrementAndGet(), request.item(), request.quantity(), Instant.now());
            orders.put(order.id(), order);
            return order;
        }
        try (Connection connection = dataSource.getConnection(); PreparedStatement insert = connection.prepareStatement(
                "INSERT INTO orders VALUES ('ord_' || nextval('order_ids'), ?, ?, now()) RETURNING id, item, quantity, created_at")) {
            insert.setString(1, request.item());
            insert.setInt(2, request.quantity());
            try (ResultSet row = insert.executeQuery()) {
                row.next();
                return order(row);
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    public Optional<Order> find(String id) {
        if (dataSource == null) {
            return Optional.ofNullable(orders.get(id));
        }
        List<Order> found = select("SELECT id, item, quantity, created_at FROM orders WHERE id = ?", id);
        return found.stream().findFirst();
    }

    public Collection<Order> all() {
        return dataSource == null ? orders.values() : select("SELECT id, item, quantity, created_at FROM orders ORDER BY created_at", null);
    }

    private List<Order> select(String sql, String id) {
        try (Connection connection = dataSource.getConnection(); PreparedStatement query = connection.prepareStatement(sql)) {
            if (id != null) {
                query.setString(1, id);
            }
            List<Order> found = new ArrayList<>();
            try (ResultSet rows = query.executeQuery()) {
                while (rows.next()) {
                    found.add(order(rows));
                }
            }
            return found;
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Order order(ResultSet row) throws SQLException {
        return new Order(row.getString(1), row.getString(2), row.getInt(3), row.getTimestamp(4).toInstant());
    }
}
