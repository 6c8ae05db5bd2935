package io.idemkey.bench;

import io.idemkey.spi.AcquireResult;
import io.idemkey.spi.IdempotencyStore;
import io.idemkey.spi.Renewal;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.config.ConfigProvider;

import javax.naming.InitialContext;
import javax.naming.NamingException;
import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Arrays;

/**
 * Seed 003's database-backed pattern, as an {@link IdempotencyStore} for the benchmark only (the
 * WAR {@code bench-seed003}, {@code idempotency.store=custom}): {@code INSERT ... ON CONFLICT DO
 * NOTHING} (on MariaDB its equivalent, {@code INSERT IGNORE}); when nothing was inserted, a
 * {@code SELECT} of the row; completion an {@code UPDATE}. No lease, no owner token, no expiry
 * takeover: what the seed has.
 */
@ApplicationScoped
public class Seed003Store implements IdempotencyStore {

    private DataSource dataSource;
    /** The column {@code key}, quoted where it is a reserved word (MariaDB). */
    private String key = "key";
    private boolean mariadb;

    private synchronized DataSource dataSource() {
        if (dataSource == null) {
            try {
                dataSource = (DataSource) new InitialContext().lookup(
                        ConfigProvider.getConfig().getValue("bench.seed003.datasource", String.class));
                try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement()) {
                    mariadb = connection.getMetaData().getDatabaseProductVersion().contains("MariaDB");
                    if (mariadb) {
                        key = "`key`";
                        statement.execute("CREATE TABLE IF NOT EXISTS seed003_keys (`key` VARCHAR(255) PRIMARY KEY,"
                                + " request_hash VARBINARY(64) NOT NULL, response MEDIUMBLOB, status VARCHAR(20) DEFAULT 'processing',"
                                + " created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,"
                                + " expires_at DATETIME DEFAULT (CURRENT_TIMESTAMP + INTERVAL 24 HOUR), KEY idx_seed003_expires (expires_at))");
                    } else {
                        statement.execute("CREATE TABLE IF NOT EXISTS seed003_keys (key VARCHAR(255) PRIMARY KEY,"
                                + " request_hash BYTEA NOT NULL, response BYTEA, status VARCHAR(20) DEFAULT 'processing',"
                                + " created_at TIMESTAMP DEFAULT NOW(), expires_at TIMESTAMP DEFAULT NOW() + INTERVAL '24 hours');"
                                + " CREATE INDEX IF NOT EXISTS idx_seed003_expires ON seed003_keys (expires_at)");
                    }
                }
            } catch (NamingException | SQLException e) {
                throw new IllegalStateException(e);
            }
        }
        return dataSource;
    }

    @Override
    public AcquireResult acquire(String recordKey, byte[] fingerprint, String ownerToken, Duration lockTtl) {
        try (Connection connection = dataSource().getConnection()) {
            if (inserted(connection, recordKey, fingerprint)) {
                return AcquireResult.ACQUIRED;
            }
            try (PreparedStatement select = connection.prepareStatement("SELECT * FROM seed003_keys WHERE " + key + " = ?")) {
                select.setString(1, recordKey);
                try (ResultSet row = select.executeQuery()) {
                    if (!row.next()) {
                        return new AcquireResult.InProgress(lockTtl); // "Unexpected: idempotency key vanished"
                    }
                    if (!Arrays.equals(row.getBytes("request_hash"), fingerprint)) {
                        return AcquireResult.MISMATCH;
                    }
                    return "completed".equals(row.getString("status"))
                            ? new AcquireResult.Completed(row.getBytes("response"), Duration.ofMinutes(1))
                            : new AcquireResult.InProgress(lockTtl);
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The seed's insert: true if it made the row. */
    private boolean inserted(Connection connection, String recordKey, byte[] fingerprint) throws SQLException {
        if (mariadb) {
            try (PreparedStatement insert = connection.prepareStatement(
                    "INSERT IGNORE INTO seed003_keys (`key`, request_hash, status) VALUES (?, ?, 'processing')")) {
                insert.setString(1, recordKey);
                insert.setBytes(2, fingerprint);
                return insert.executeUpdate() == 1;
            }
        }
        try (PreparedStatement insert = connection.prepareStatement("INSERT INTO seed003_keys (key, request_hash, status)"
                + " VALUES (?, ?, 'processing') ON CONFLICT (key) DO NOTHING RETURNING *")) {
            insert.setString(1, recordKey);
            insert.setBytes(2, fingerprint);
            try (ResultSet inserted = insert.executeQuery()) {
                return inserted.next();
            }
        }
    }

    @Override
    public boolean complete(String recordKey, String ownerToken, byte[] response, Duration ttl) {
        return update("UPDATE seed003_keys SET status = 'completed', response = ? WHERE " + key + " = ?", response, recordKey);
    }

    /** The seed marks the row failed; a retry would then be refused for good. Deleting it lets the retry run. */
    @Override
    public boolean release(String recordKey, String ownerToken) {
        update("DELETE FROM seed003_keys WHERE " + key + " = ?", null, recordKey);
        return true;
    }

    /** The seed has no lease to renew. */
    @Override
    public Renewal renew(String recordKey, String ownerToken, Duration lockTtl) {
        return Renewal.RENEWED;
    }

    private boolean update(String sql, byte[] response, String recordKey) {
        try (Connection connection = dataSource().getConnection(); PreparedStatement statement = connection.prepareStatement(sql)) {
            int i = 1;
            if (response != null) {
                statement.setBytes(i++, response);
            }
            statement.setString(i, recordKey);
            statement.executeUpdate();
            return true;
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public boolean isAvailable() {
        return true;
    }

    @Override
    public void close() {
    }
}
