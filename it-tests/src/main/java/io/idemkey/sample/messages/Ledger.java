package io.idemkey.sample.messages;

import jakarta.annotation.PostConstruct;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.json.bind.Jsonb;
import jakarta.json.bind.JsonbBuilder;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import redis.clients.jedis.RedisClient;

import javax.naming.InitialContext;
import javax.naming.NamingException;
import javax.sql.DataSource;
import java.net.URI;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.Optional;

/**
 * The effect of applying a payment: an entry appended to a ledger every instance shares, so that a
 * payment applied twice shows, whichever instances applied it.
 * <ul>
 * <li>By default a Redis list, {@code sample:ledger:<queue>}, on {@code sample.ledger.redis-url}
 *     (default: Idemkey's {@code idempotency.redis.url}).</li>
 * <li>In the PostgreSQL mode ({@code sample.orders.datasource} set, as for orders), a row of the table
 *     {@code ledger}, written in the caller's transaction: with Idemkey's JDBC store on the same
 *     database, the entry and the idempotency record commit together (exactly once).</li>
 * </ul>
 */
@ApplicationScoped
public class Ledger {

    @Inject
    @ConfigProperty(name = "sample.ledger.redis-url")
    Optional<String> ledgerRedisUrl;

    @Inject
    @ConfigProperty(name = "idempotency.redis.url", defaultValue = "redis://localhost:6379")
    String idempotencyRedisUrl;

    @Inject
    @ConfigProperty(name = "sample.orders.datasource")
    Optional<String> dataSourceName;

    @Inject
    @ConfigProperty(name = "sample.payments.queue", defaultValue = "payments")
    String queue;

    private final Jsonb jsonb = JsonbBuilder.create();
    private RedisClient redis;
    private DataSource dataSource;

    @PostConstruct
    void open() {
        if (dataSourceName.isPresent()) {
            try {
                dataSource = (DataSource) new InitialContext().lookup(dataSourceName.get());
                try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement()) {
                    statement.execute("CREATE TABLE IF NOT EXISTS ledger (message_id VARCHAR(255) NOT NULL,"
                            + " queue VARCHAR(255) NOT NULL, account VARCHAR(255) NOT NULL, amount_cents BIGINT NOT NULL,"
                            + " applied_by VARCHAR(255) NOT NULL, applied_at TIMESTAMP(6) NOT NULL)"); // PostgreSQL and MariaDB
                }
            } catch (NamingException | SQLException e) {
                throw new IllegalStateException("The ledger's DataSource " + dataSourceName.get() + " is not usable: " + e, e);
            }
        } else {
            redis = RedisClient.create(URI.create(ledgerRedisUrl.orElse(idempotencyRedisUrl)));
        }
    }

    @PreDestroy
    void close() {
        if (redis != null) {
            redis.close();
        }
    }

    /** Appends the payment to the ledger: the one effect that must happen exactly once per message. */
    public AppliedPayment apply(String messageId, PaymentMessage payment, String instance) {
        AppliedPayment applied = new AppliedPayment(messageId, payment.account(), payment.amountCents(), instance, Instant.now());
        if (dataSource == null) {
            redis.rpush("sample:ledger:" + queue, jsonb.toJson(applied));
            return applied;
        }
        try (Connection connection = dataSource.getConnection(); PreparedStatement insert = connection.prepareStatement(
                "INSERT INTO ledger VALUES (?, ?, ?, ?, ?, ?)")) {
            insert.setString(1, messageId);
            insert.setString(2, queue);
            insert.setString(3, applied.account());
            insert.setLong(4, applied.amountCents());
            insert.setString(5, instance);
            insert.setTimestamp(6, Timestamp.from(applied.appliedAt()));
            insert.executeUpdate();
            return applied;
        } catch (SQLException e) {
            throw new IllegalStateException("The ledger entry could not be written: " + e.getMessage(), e);
        }
    }
}
