package io.idemkey.sample;

import io.idemkey.it.ServerProcess;
import io.idemkey.testing.PostgresServer;
import io.idemkey.testing.RedisServer;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;

/**
 * Starts the sample service on Payara Micro (README's first command), or on Open Liberty with
 * {@code -Dsample.server=liberty}: against
 * {@code idempotency.redis.url} when given (system property or {@code IDEMPOTENCY_REDIS_URL}), else
 * against a private {@code redis-server} when one is installed, else on the in-memory store (and
 * says so loudly). With {@code -Dsample.store=jdbc}: orders and Idemkey's records in one private
 * PostgreSQL (the server's DataSource {@code jdbc/idemkey}), committed together. Prints curl lines
 * that show a first call, a replay, a 422 and a 409, then runs until stopped (Ctrl-C).
 */
public final class SampleLauncher {

    /** The sample's PostgreSQL mode: orders and records in the server's DataSource {@code jdbc/idemkey}. */
    public static final Map<String, String> POSTGRES_MODE = Map.of("idempotency.store", "jdbc",
            "idempotency.jdbc.datasource", "jdbc/idemkey", "sample.orders.datasource", "jdbc/idemkey");

    private SampleLauncher() {
    }

    public static void main(String[] args) throws Exception {
        int port = Integer.getInteger("sample.port", 8080);
        ServerProcess.Kind kind = ServerProcess.Kind.valueOf(
                System.getProperty("sample.server", "payara").toUpperCase(Locale.ROOT));
        Path war = Path.of(System.getProperty("sample.warFile", "target/idemkey-sample.war"));
        if (!Files.exists(war)) {
            throw new IllegalStateException(war.toAbsolutePath() + " is missing: run `mvn -f it-tests package` first");
        }
        Map<String, String> config = new LinkedHashMap<>();
        String redisUrl = System.getProperty("idempotency.redis.url", System.getenv("IDEMPOTENCY_REDIS_URL"));
        String store;
        PostgresServer postgres = null;
        if ("jdbc".equals(System.getProperty("sample.store"))) {
            postgres = PostgresServer.start();
            config.putAll(POSTGRES_MODE);
            store = "a private PostgreSQL on port " + postgres.port() + " (orders and idempotency records in one"
                    + " transaction; psql -h 127.0.0.1 -p " + postgres.port() + " -U postgres)";
        } else if (redisUrl != null && !redisUrl.isBlank()) {
            config.put("idempotency.redis.url", redisUrl);
            store = "Redis at " + redisUrl.replaceAll("//[^@/]*@", "//***@");
        } else if (redisServerInstalled()) {
            RedisServer redis = RedisServer.start();
            config.put("idempotency.redis.url", redis.url());
            store = "a private redis-server on port " + redis.port() + " (stopped with the sample)";
        } else {
            config.put("idempotency.store", "memory");
            store = "the IN-MEMORY store";
            System.out.println("""

                    ************************************************************************
                    *  No Redis: idempotency.redis.url is not set and redis-server is not   *
                    *  installed. The sample runs on the IN-MEMORY store: keys live in this  *
                    *  one process only. Install redis-server or set IDEMPOTENCY_REDIS_URL.  *
                    ************************************************************************
                    """);
        }
        // the payment consumer (off unless -Dsample.payments.queue=...): docs/methods-and-messages.md
        System.getProperties().stringPropertyNames().stream()
                .filter(name -> name.startsWith("sample.payments.") || name.startsWith("sample.rabbitmq."))
                .forEach(name -> config.put(name, System.getProperty(name)));
        String serverName = kind == ServerProcess.Kind.PAYARA ? "Payara Micro" : "Open Liberty";
        System.out.println("Starting the Idemkey sample on " + serverName + " (port " + port + ") with " + store + " ...");
        ServerProcess server = postgres == null ? ServerProcess.start(kind, List.of(war), port, config)
                : ServerProcess.startWithPostgres(kind, List.of(war), port, config, postgres, List.of());
        Runtime.getRuntime().addShutdownHook(new Thread(server::kill));
        HttpResponse<Void> orders = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                server.uri("idemkey-sample").resolve("api/orders")).build(), HttpResponse.BodyHandlers.discarding());
        if (orders.statusCode() != 200) {
            System.err.println("The sample did not start (GET /idemkey-sample/api/orders answered "
                    + orders.statusCode() + "); see the server log " + server.logFile());
            System.exit(1);
        }
        System.out.println(curlLines("http://localhost:" + port + "/idemkey-sample/api", store, server.logFile()));
        server.await();
    }

    static String curlLines(String api, String store, Path log) {
        String run = UUID.randomUUID().toString().substring(0, 8);
        String order = "curl -i -X POST " + api + "/orders -H 'Content-Type: application/json'"
                + " -H 'Idempotency-Key: \"order-" + run + "\"'";
        String payment = "curl -s -o /dev/null -w '%{http_code}\\n' -X POST " + api + "/payments"
                + " -H 'Content-Type: application/json' -H 'Idempotency-Key: \"pay-" + run + "\"'"
                + " -d '{\"orderId\":\"ord_1\",\"amountCents\":1999,\"currency\":\"EUR\"}'";
        return """

                Idemkey sample is up: %s  (store: %s; server log: %s)

                # 1. First call: places the order (201 Created, Location)
                %s -d '{"item":"book","quantity":1}'

                # 2. The same again: replayed, the same order (Idempotent-Replayed: true)
                %s -d '{"item":"book","quantity":1}'

                # 3. The same key with another body: 422 Unprocessable Content
                %s -d '{"item":"book","quantity":2}'

                # 4. Two charges at once with one key (the gateway takes 1.5 s): one 201, one 409
                %s & sleep 0.3; %s; wait

                Stop with Ctrl-C.
                """.formatted(api, store, log, order, order, order, payment, payment);
    }

    private static boolean redisServerInstalled() {
        for (String directory : System.getenv().getOrDefault("PATH", "").split(":")) {
            if (Files.isExecutable(Path.of(directory, "redis-server"))) {
                return true;
            }
        }
        return false;
    }
}
