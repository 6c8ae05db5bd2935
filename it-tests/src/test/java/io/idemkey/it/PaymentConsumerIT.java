package io.idemkey.it;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import io.idemkey.sample.messages.PaymentConsumer;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import redis.clients.jedis.Jedis;

import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The sample's payment consumer on two servers of this run's kind, against the machine's RabbitMQ
 * (a queue of this test's own, deleted at the end) and a shared Redis: at least once in, exactly
 * once out. The effect is the ledger in Redis, which outlives a killed server.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PaymentConsumerIT {

    private static final int LOCK_TTL_SECONDS = 5;
    private static final String QUEUE = "idemkey-it-payments-" + UUID.randomUUID();
    private static final Path SAMPLE = Path.of("target", "idemkey-sample.war");

    private static Connection publisherA;
    private static Connection publisherB;
    private static Channel channelA;
    private static Channel channelB;
    private static final List<ServerProcess> servers = new ArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setUri(System.getProperty("rabbitmq.uri", "amqp://guest:guest@127.0.0.1:5672"));
        publisherA = factory.newConnection("idemkey-it-publisher-a");
        publisherB = factory.newConnection("idemkey-it-publisher-b");
        channelA = publisherA.createChannel();
        channelB = publisherB.createChannel();
        PaymentConsumer.declare(channelA, QUEUE);
        CompletableFuture<ServerProcess> a = CompletableFuture.supplyAsync(() -> server("A"));
        CompletableFuture<ServerProcess> b = CompletableFuture.supplyAsync(() -> server("B"));
        servers.add(a.join());
        servers.add(b.join());
        // each server's four consumers are registered (a server is ready before its consumers connect)
        await().atMost(Duration.ofSeconds(60)).until(() -> channelA.queueDeclarePassive(QUEUE).getConsumerCount() == 8);
    }

    private static ServerProcess server(String instance) {
        return ServerProcess.start(ServerProcess.Kind.ofThisRun(), List.of(SAMPLE), ServerProcess.freePort(), Map.of(
                "sample.payments.queue", QUEUE,
                "sample.instance", instance,
                "sample.payments.requeue-max-ms", "300",
                "idempotency.redis.url", TestRedis.get().url(),
                "io.idemkey.sample.messages.PaymentApplier/apply/Idempotent/lockTtlSeconds", Integer.toString(LOCK_TTL_SECONDS)));
    }

    @AfterAll
    static void stop() throws Exception {
        servers.forEach(ServerProcess::close);
        if (channelA != null) {
            channelA.queueDelete(QUEUE);
            channelA.queueDelete(QUEUE + ".dead");
        }
        for (Connection connection : new Connection[]{publisherA, publisherB}) {
            if (connection != null) {
                connection.close();
            }
        }
    }

    @Test
    @Order(1)
    void aPaymentPublishedFiveTimesByTwoPublishersIsAppliedOnce() throws Exception {
        long ackedBefore = total("acked");
        List<String> ids = new ArrayList<>();
        for (int payment = 0; payment < 20; payment++) {
            ids.add(UUID.randomUUID().toString());
        }
        for (int copy = 0; copy < 5; copy++) {
            for (String id : ids) {
                publish(copy % 2 == 0 ? channelA : channelB, id, payment("acct-" + id.substring(0, 4), 1250, 20));
            }
        }

        await().atMost(Duration.ofSeconds(60)).until(() -> total("acked") - ackedBefore == 100);
        Map<String, Long> applied = ledger();
        for (String id : ids) {
            assertEquals(1, applied.getOrDefault(id, 0L), "payment " + id + " applied once");
        }
        assertTrue(servers.stream().allMatch(s -> counts(s).getJsonNumber("delivered").longValue() > 0),
                "both servers consumed: " + servers.stream().map(PaymentConsumerIT::counts).toList());
    }

    @Test
    @Order(2)
    void aCopyArrivingWhileTheFirstIsAppliedIsRequeuedAndLaterAckedAsADuplicate() throws Exception {
        long ackedBefore = total("acked");
        long requeuedBefore = total("requeued");
        String id = UUID.randomUUID().toString();
        publish(channelA, id, payment("acct-slow", 500, 3000));
        await().atMost(Duration.ofSeconds(30)).until(() -> total("applying") == 1);

        publish(channelB, id, payment("acct-slow", 500, 3000));
        await().atMost(Duration.ofSeconds(30)).until(() -> total("requeued") > requeuedBefore);
        assertEquals(0, ledger().getOrDefault(id, 0L), "the copy was not applied meanwhile");

        await().atMost(Duration.ofSeconds(30)).until(() -> total("acked") - ackedBefore == 2);
        assertEquals(1, ledger().get(id));
    }

    @Test
    @Order(3)
    void poisonIsDeadLetteredWithoutBlockingTheQueueOrTheConsumers() throws Exception {
        long deadBefore = total("dead-lettered");
        long ackedBefore = total("acked");
        String reused = UUID.randomUUID().toString();
        publish(channelA, reused, payment("acct-p", 100, 0));
        await().atMost(Duration.ofSeconds(30)).until(() -> total("acked") - ackedBefore == 1);

        publish(channelA, UUID.randomUUID().toString(), "{not json");
        publish(channelA, null, payment("acct-p", 100, 0)); // no message-id
        publish(channelA, UUID.randomUUID().toString(), "{\"account\":\"\",\"amountCents\":100}");
        publish(channelB, reused, payment("acct-p", 999, 0)); // the id of another payment
        String good = UUID.randomUUID().toString();
        publish(channelB, good, payment("acct-p", 100, 0));

        await().atMost(Duration.ofSeconds(30)).until(() -> total("dead-lettered") - deadBefore == 4 && ledger().containsKey(good));
        assertEquals(4, channelA.queueDeclarePassive(QUEUE + ".dead").getMessageCount());
        assertEquals(1, ledger().get(reused));
        // each dead-lettering is logged by the server that did it (just after counting it); RabbitMQ
        // spreads the four poison messages over the eight consumers in turn, so they may all have
        // gone to one server's four
        long dead = total("dead-lettered");
        await().atMost(Duration.ofSeconds(10)).until(() -> servers.stream()
                .mapToLong(s -> s.log().split("payment-consumer outcome=dead-lettered", -1).length - 1).sum() == dead);
    }

    /** Last: it kills one of the servers. */
    @Test
    @Order(4)
    void aPaymentWhoseServerIsKilledMidMessageRunsOnTheOtherOnceTheLeaseIsOverAndOnceInTotal() throws Exception {
        String id = UUID.randomUUID().toString();
        publish(channelA, id, payment("acct-crash", 700, 8000));
        await().atMost(Duration.ofSeconds(30)).until(() -> total("applying") == 1);
        ServerProcess victim = servers.stream().filter(s -> counts(s).getJsonNumber("applying").longValue() == 1).findFirst().orElseThrow();
        ServerProcess survivor = servers.get(1 - servers.indexOf(victim));
        long survivorRequeued = counts(survivor).getJsonNumber("requeued").longValue();
        long killedAt = System.nanoTime(); // before kill(), which waits for the process to be gone: its renewals end here
        victim.kill();
        servers.remove(victim);

        await().atMost(Duration.ofSeconds(60)).until(() -> ledger().containsKey(id));
        long seconds = Duration.ofNanos(System.nanoTime() - killedAt).toSeconds();
        assertTrue(seconds >= LOCK_TTL_SECONDS + 8 - 2, "it ran only once the dead owner's lease was over: after " + seconds + " s");
        assertTrue(counts(survivor).getJsonNumber("requeued").longValue() > survivorRequeued,
                "the redelivered copy met the dead owner's lease and was requeued meanwhile");
        await().atMost(Duration.ofSeconds(30)).until(() -> channelA.queueDeclarePassive(QUEUE).getMessageCount() == 0
                && counts(survivor).getJsonNumber("applying").longValue() == 0);
        assertEquals(1, ledger().get(id), "applied exactly once in total");
    }

    private static String payment(String account, long cents, long processMillis) {
        return "{\"account\":\"" + account + "\",\"amountCents\":" + cents + ",\"processMillis\":" + processMillis + "}";
    }

    private static void publish(Channel channel, String messageId, String body) throws Exception {
        AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder().messageId(messageId).contentType("application/json")
                .deliveryMode(2).build();
        channel.basicPublish("", QUEUE, properties, body.getBytes(StandardCharsets.UTF_8));
    }

    /** The ledger's entries by message id: how often each payment was applied. */
    private static Map<String, Long> ledger() {
        try (Jedis redis = TestRedis.get().client()) {
            return redis.lrange("sample:ledger:" + QUEUE, 0, -1).stream().map(PaymentConsumerIT::json)
                    .collect(Collectors.groupingBy(entry -> entry.getString("messageId"), Collectors.counting()));
        }
    }

    private static long total(String outcome) {
        return servers.stream().map(PaymentConsumerIT::counts).mapToLong(c -> c.getJsonNumber(outcome).longValue()).sum();
    }

    private static JsonObject counts(ServerProcess server) {
        return Http.json(new Http(server.uri("idemkey-sample")).get("api/payments-consumer"));
    }

    private static JsonObject json(String text) {
        try (JsonReader reader = Json.createReader(new StringReader(text))) {
            return reader.readObject();
        }
    }

}
