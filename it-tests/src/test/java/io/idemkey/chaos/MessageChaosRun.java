package io.idemkey.chaos;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import io.idemkey.it.ServerProcess;
import io.idemkey.sample.messages.PaymentConsumer;
import io.idemkey.testing.RedisServer;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import redis.clients.jedis.Jedis;

import java.io.StringReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The chaos run's message mode: the sample's payment consumer on one Payara Micro and one Open
 * Liberty sharing one store, fed by two publishers through the machine's RabbitMQ. Every payment is
 * published 1 to N times, in random order, paced ({@code chaos.rate} a second), while one server is killed ({@code kill -9}, and started
 * again) and the store is killed and restarted. Then the run waits until the queue is drained and
 * checks, from the ledger (on the JDBC store a table written in the same transaction as the record;
 * on Redis a list in a second Redis that is never restarted): every payment applied exactly once,
 * nothing dead-lettered.
 *
 * <p>{@code mvn -f it-tests package liberty:create exec:java@chaos -Dchaos.mode=messages
 * -Dchaos.messages=10000 [-Dchaos.store=jdbc]}; the suite runs a short one ({@code ChaosIT}).
 */
public final class MessageChaosRun {

    private static final int LOCK_TTL_SECONDS = 5;
    private static final Path SAMPLE = Path.of(System.getProperty("sample.warFile", "target/idemkey-sample.war"));

    /** How much chaos. */
    public record Options(int messages, int maxCopies, int publicationsPerSecond, String store) {
        static Options fromSystemProperties() {
            return new Options(Integer.getInteger("chaos.messages", 10_000), Integer.getInteger("chaos.sends", 5),
                    Integer.getInteger("chaos.rate", 500), System.getProperty("chaos.store", "redis"));
        }
    }

    /** The figures of a run. */
    public record Report(String store, int messages, int publications, Duration duration, Map<Integer, Integer> paymentsByEffects,
                         int lost, int doubled, int doubledAtTheKill, long deadLettered, Map<String, Long> consumerOutcomes,
                         List<String> events) {

        /**
         * Nothing lost, nothing dead-lettered, and nothing applied twice, except on the Redis store a
         * payment applied by the killed server right before it died (its ledger entry was written, its
         * record never completed: the documented window that only the JDBC store closes).
         */
        public boolean passed() {
            return lost == 0 && doubled - doubledAtTheKill == 0 && deadLettered == 0;
        }

        public String table() {
            StringBuilder out = new StringBuilder("\nMessage chaos run (" + store + "), " + messages + " payments, " + publications
                    + " publications in " + duration.toSeconds() + " s\n");
            events.forEach(e -> out.append("  ").append(e).append('\n'));
            out.append(String.format("  %-58s %s%n", "payments by ledger entries (effects)", paymentsByEffects));
            out.append(String.format("  %-58s %d%n", "payments never applied (lost)", lost));
            out.append(String.format("  %-58s %d%n", "payments applied twice or more", doubled));
            out.append(String.format("  %-58s %d%n", "  of those, applied on the killed server just before the kill", doubledAtTheKill));
            out.append(String.format("  %-58s %d%n", "messages dead-lettered", deadLettered));
            out.append(String.format("  %-58s %s%n", "consumer outcomes (surviving instances)", consumerOutcomes));
            return out.toString();
        }
    }

    private final Options options;
    private final List<String> events = new CopyOnWriteArrayList<>();
    private final String queue = "idemkey-chaos-payments-" + UUID.randomUUID();
    private Instant start;
    /** Each server start gets a new instance name: a ledger entry says which life of a server wrote it. */
    private final java.util.concurrent.atomic.AtomicInteger starts = new java.util.concurrent.atomic.AtomicInteger();
    private volatile String killedInstance = "";
    private final String[] instances = new String[2];

    private MessageChaosRun(Options options) {
        this.options = options;
    }

    public static void main(String[] args) throws Exception {
        Report report = run(Options.fromSystemProperties());
        System.out.println(report.table());
        System.exit(report.passed() ? 0 : 1);
    }

    public static Report run(Options options) throws Exception {
        return new MessageChaosRun(options).execute();
    }

    private Report execute() throws Exception {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setUri(System.getProperty("rabbitmq.uri", "amqp://guest:guest@127.0.0.1:5672"));
        try (ChaosStore store = ChaosStore.start(options.store());
             RedisServer ledger = RedisServer.start();
             Connection publisherA = factory.newConnection("idemkey-chaos-a");
             Connection publisherB = factory.newConnection("idemkey-chaos-b")) {
            Channel a = publisherA.createChannel();
            Channel b = publisherB.createChannel();
            PaymentConsumer.declare(a, queue);
            Map<String, String> config = new HashMap<>(store.config());
            config.put("sample.payments.queue", queue);
            config.put("sample.payments.requeue-max-ms", "300");
            config.put("sample.ledger.redis-url", ledger.url());
            config.put("io.idemkey.sample.messages.PaymentApplier/apply/Idempotent/lockTtlSeconds", Integer.toString(LOCK_TTL_SECONDS));
            if (store instanceof ChaosStore.OnDatabase) {
                config.put("sample.orders.datasource", "jdbc/idemkey");
            }
            ServerProcess.Kind[] kinds = {ServerProcess.Kind.PAYARA, ServerProcess.Kind.LIBERTY};
            int[] ports = {ServerProcess.freePort(), ServerProcess.freePort()};
            ServerProcess[] running = ChaosStore.startBoth(() -> startServer(store, config, kinds[0], ports[0]),
                    () -> startServer(store, config, kinds[1], ports[1]));
            try {
                start = Instant.now();
                int publications = publish(store, List.of(a, b), config, kinds, ports, running);
                drain(a, running);
                Duration duration = Duration.between(start, Instant.now());
                return report(store, ledger, a, publications, duration, running);
            } finally {
                for (ServerProcess server : running) {
                    if (server != null) {
                        server.close();
                    }
                }
                a.queueDelete(queue);
                a.queueDelete(queue + ".dead");
            }
        }
    }

    private ServerProcess startServer(ChaosStore store, Map<String, String> config, ServerProcess.Kind kind, int port) {
        Map<String, String> properties = new HashMap<>(config);
        String instance = kind + "#" + starts.incrementAndGet();
        properties.put("sample.instance", instance);
        instances[kind.ordinal()] = instance;
        return store.startSample(kind, SAMPLE, port, properties);
    }

    /**
     * Every payment's copies, shuffled, from two publishers; at 30 % of the publications a server is
     * killed (and started again at 60 %), at 50 % the store is killed and restarted.
     */
    private int publish(ChaosStore store, List<Channel> publishers, Map<String, String> config, ServerProcess.Kind[] kinds,
                        int[] ports, ServerProcess[] running) throws Exception {
        List<String> copies = new ArrayList<>();
        Map<String, String> bodies = new HashMap<>(); // every copy of a message is the same message
        for (int i = 0; i < options.messages(); i++) {
            String id = UUID.randomUUID().toString();
            bodies.put(id, "{\"account\":\"acct-" + id.substring(0, 6) + "\",\"amountCents\":" + (100 + (id.hashCode() & 0xfff))
                    + ",\"processMillis\":" + ThreadLocalRandom.current().nextInt(20) + "}");
            int n = 1 + ThreadLocalRandom.current().nextInt(options.maxCopies());
            for (int c = 0; c < n; c++) {
                copies.add(id);
            }
        }
        Collections.shuffle(copies);
        int victim = ThreadLocalRandom.current().nextInt(2);
        CompletableFuture<ServerProcess> restarted = null;
        for (int i = 0; i < copies.size(); i++) {
            if (i == copies.size() * 3 / 10) {
                killedInstance = instances[victim];
                running[victim].kill();
                events.add(String.format("%.1f s: %s killed (kill -9) with payments in flight", seconds(), kinds[victim]));
                running[victim] = null;
            } else if (i == copies.size() / 2) {
                store.restart();
                events.add(String.format("%.1f s: %s", seconds(), store.restartEvent()));
            } else if (i == copies.size() * 6 / 10) {
                int port = ports[victim];
                ServerProcess.Kind kind = kinds[victim];
                restarted = CompletableFuture.supplyAsync(() -> startServer(store, config, kind, port));
                events.add(String.format("%.1f s: %s starting again", seconds(), kinds[victim]));
            }
            String id = copies.get(i);
            publishers.get(i % 2).basicPublish("", queue, new AMQP.BasicProperties.Builder().messageId(id).deliveryMode(2).build(),
                    bodies.get(id).getBytes(StandardCharsets.UTF_8));
            long due = start.toEpochMilli() + (long) i * 1000 / options.publicationsPerSecond();
            long ahead = due - System.currentTimeMillis();
            if (ahead > 0) {
                Thread.sleep(ahead); // paced: the kill and the restart happen while the consumers are busy
            }
        }
        events.add(String.format("%.1f s: all %d publications sent", seconds(), copies.size()));
        if (restarted != null) {
            running[victim] = restarted.get();
            events.add(String.format("%.1f s: %s serving again", seconds(), kinds[victim]));
        }
        return copies.size();
    }

    /** Until the queue is empty and no instance applies anything, for two seconds in a row. */
    private void drain(Channel channel, ServerProcess[] running) throws Exception {
        int quiet = 0;
        Instant deadline = Instant.now().plus(Duration.ofMinutes(20));
        while (quiet < 4) {
            if (Instant.now().isAfter(deadline)) {
                throw new IllegalStateException("the queue did not drain in 20 minutes");
            }
            Thread.sleep(500);
            boolean idle = channel.queueDeclarePassive(queue).getMessageCount() == 0
                    && sum(running, "applying") == 0 && sum(running, "delivered") == sum(running, "acked")
                    + sum(running, "requeued") + sum(running, "dead-lettered");
            quiet = idle ? quiet + 1 : 0;
        }
        events.add(String.format("%.1f s: the queue drained", seconds()));
    }

    private Report report(ChaosStore store, RedisServer redisLedger, Channel channel, int publications, Duration duration,
                          ServerProcess[] running) throws Exception {
        Map<String, List<String>> appliedBy = new HashMap<>();
        if (store instanceof ChaosStore.OnDatabase database) {
            try (java.sql.Connection connection = database.database().dataSource().getConnection();
                 Statement query = connection.createStatement();
                 ResultSet rows = query.executeQuery("SELECT message_id, applied_by FROM ledger")) {
                while (rows.next()) {
                    appliedBy.computeIfAbsent(rows.getString(1), k -> new ArrayList<>()).add(rows.getString(2));
                }
            }
        } else {
            try (Jedis jedis = redisLedger.client()) {
                for (String entry : jedis.lrange("sample:ledger:" + queue, 0, -1)) {
                    JsonObject applied = json(entry);
                    appliedBy.computeIfAbsent(applied.getString("messageId"), k -> new ArrayList<>()).add(applied.getString("appliedBy"));
                }
            }
        }
        Map<Integer, Integer> byEffects = new TreeMap<>();
        appliedBy.values().forEach(list -> byEffects.merge(list.size(), 1, Integer::sum));
        int applied = appliedBy.size();
        int doubled = (int) appliedBy.values().stream().filter(list -> list.size() > 1).count();
        int doubledAtTheKill = (int) appliedBy.values().stream().filter(list -> list.size() == 2 && list.contains(killedInstance)).count();
        long dead = channel.queueDeclarePassive(queue + ".dead").getMessageCount();
        Map<String, Long> outcomes = new TreeMap<>();
        for (String outcome : List.of("delivered", "acked", "requeued", "dead-lettered")) {
            outcomes.put(outcome, sum(running, outcome));
        }
        return new Report(store.description(), options.messages(), publications, duration, byEffects,
                options.messages() - applied, doubled, store instanceof ChaosStore.OnDatabase ? 0 : doubledAtTheKill, dead, outcomes, events);
    }

    private static long sum(ServerProcess[] running, String outcome) {
        long total = 0;
        for (ServerProcess server : running) {
            if (server != null) {
                total += counts(server.uri("idemkey-sample")).getJsonNumber(outcome).longValue();
            }
        }
        return total;
    }

    private static JsonObject counts(URI sample) {
        try {
            HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(sample.resolve("api/payments-consumer"))
                    .timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString());
            return json(response.body());
        } catch (Exception e) {
            throw new IllegalStateException("the consumer counts of " + sample + " are not readable: " + e, e);
        }
    }

    private static JsonObject json(String text) {
        try (JsonReader reader = Json.createReader(new StringReader(text))) {
            return reader.readObject();
        }
    }

    private double seconds() {
        return Duration.between(start, Instant.now()).toMillis() / 1000.0;
    }

}
