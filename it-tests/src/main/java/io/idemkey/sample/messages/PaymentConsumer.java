package io.idemkey.sample.messages;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import io.idemkey.IdempotencyException;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.Initialized;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.json.bind.Jsonb;
import jakarta.json.bind.JsonbBuilder;
import jakarta.json.bind.JsonbException;
import org.eclipse.microprofile.config.inject.ConfigProperty;

import javax.naming.InitialContext;
import javax.naming.NamingException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Consumes payments from a RabbitMQ queue ({@code sample.payments.queue}; off when unset) with
 * manual acknowledgements, and applies each through the {@code @Idempotent} {@link PaymentApplier}:
 * at least once in (the broker redelivers whatever was not acknowledged, to any instance), exactly
 * once out (the ledger entry). Per message:
 * <ul>
 * <li>applied, or a copy of one already applied: acknowledged;</li>
 * <li>a copy of one still being applied (here or on another instance), or the store unreachable:
 *     requeued after the time the exception says (at most {@code sample.payments.requeue-max-ms}),
 *     neither acknowledged nor applied; a copy whose first owner died runs once its lease is over;</li>
 * <li>poison (a payload that is no payment, no {@code message-id}, a message id reused for another
 *     payment): rejected, so the broker dead-letters it to {@code <queue>.dead}, with a log line;</li>
 * <li>any other failure: requeued (the failure released the key: a copy runs again).</li>
 * </ul>
 * Consumers ({@code sample.payments.consumers}, default 4) each have a channel with a prefetch of
 * one, on the server's managed threads.
 */
@ApplicationScoped
public class PaymentConsumer {

    private static final Logger LOG = Logger.getLogger(PaymentConsumer.class.getName());

    @Inject
    @ConfigProperty(name = "sample.payments.queue")
    Optional<String> queue;

    @Inject
    @ConfigProperty(name = "sample.rabbitmq.uri", defaultValue = "amqp://guest:guest@127.0.0.1:5672")
    String brokerUri;

    @Inject
    @ConfigProperty(name = "sample.payments.consumers", defaultValue = "4")
    int consumers;

    @Inject
    @ConfigProperty(name = "sample.payments.requeue-max-ms", defaultValue = "1000")
    long requeueMaxMillis;

    @Inject
    PaymentApplier applier;

    private final Jsonb jsonb = JsonbBuilder.create();
    private final Map<String, AtomicLong> counts = new LinkedHashMap<>();
    private ScheduledExecutorService scheduler;
    private volatile Connection connection;
    private volatile boolean stopped;

    public PaymentConsumer() {
        for (String outcome : new String[]{"delivered", "acked", "requeued", "dead-lettered"}) {
            counts.put(outcome, new AtomicLong());
        }
    }

    void start(@Observes @Initialized(ApplicationScoped.class) Object applicationStarted) {
        if (queue.isEmpty()) {
            return;
        }
        scheduler = managed("java:comp/DefaultManagedScheduledExecutorService", ScheduledExecutorService.class);
        connect();
    }

    private void connect() {
        if (stopped) {
            return;
        }
        try {
            ConnectionFactory factory = new ConnectionFactory();
            factory.setUri(brokerUri);
            factory.setThreadFactory(managed("java:comp/DefaultManagedThreadFactory", ThreadFactory.class));
            factory.setAutomaticRecoveryEnabled(true);
            Connection opened = factory.newConnection("idemkey-sample-payments");
            try (Channel setup = opened.createChannel()) {
                declare(setup, queue.get());
            }
            for (int i = 0; i < consumers; i++) {
                Channel channel = opened.createChannel();
                channel.basicQos(1);
                channel.basicConsume(queue.get(), false, new Consumer(channel));
            }
            connection = opened;
            LOG.info(() -> "Consuming payments from " + queue.get() + " with " + consumers + " consumers");
        } catch (Exception e) {
            LOG.warning("The payments queue " + queue.get() + " is not reachable yet (" + e + "); trying again in 5 s");
            scheduler.schedule(this::connect, 5, TimeUnit.SECONDS);
        }
    }

    /**
     * The queue and its dead-letter queue: a rejected message goes to {@code <queue>.dead}. Publishers
     * declare it the same way (or not at all).
     */
    public static void declare(Channel channel, String queue) throws IOException {
        channel.queueDeclare(queue + ".dead", true, false, false, null);
        channel.queueDeclare(queue, true, false, false, Map.of("x-dead-letter-exchange", "",
                "x-dead-letter-routing-key", queue + ".dead"));
    }

    @PreDestroy
    void stop() {
        stopped = true;
        Connection open = connection;
        if (open != null) {
            try {
                open.close(5_000);
            } catch (IOException | RuntimeException e) {
                LOG.log(Level.FINE, "Closing the payments connection failed", e);
            }
        }
    }

    /** What happened to the messages this instance received, by outcome. */
    public Map<String, Long> counts() {
        Map<String, Long> snapshot = new LinkedHashMap<>();
        counts.forEach((outcome, count) -> snapshot.put(outcome, count.get()));
        snapshot.put("applying", (long) applier.applying());
        return snapshot;
    }

    private final class Consumer extends DefaultConsumer {

        Consumer(Channel channel) {
            super(channel);
        }

        @Override
        public void handleDelivery(String consumerTag, Envelope envelope, AMQP.BasicProperties properties, byte[] body)
                throws IOException {
            counts.get("delivered").incrementAndGet();
            long tag = envelope.getDeliveryTag();
            String messageId = properties.getMessageId();
            PaymentMessage payment;
            try {
                payment = jsonb.fromJson(new String(body, StandardCharsets.UTF_8), PaymentMessage.class);
            } catch (JsonbException | ClassCastException e) {
                deadLetter(tag, messageId, "the payload is no payment: " + e.getMessage());
                return;
            }
            String problem = payment == null ? "the payload is empty" : payment.problem();
            if (problem != null) {
                deadLetter(tag, messageId, problem);
                return;
            }
            try {
                AppliedPayment applied = applier.apply(messageId, payment);
                getChannel().basicAck(tag, false);
                counts.get("acked").incrementAndGet();
                log(Level.FINE, "acked", messageId, "applied-by=" + applied.appliedBy() + " redelivered=" + envelope.isRedeliver());
            } catch (IdempotencyException.InvalidKey e) {
                deadLetter(tag, messageId, "no usable message-id: " + e.getMessage());
            } catch (IdempotencyException.KeyReused e) {
                deadLetter(tag, messageId, "the message-id was used before for another payment");
            } catch (IdempotencyException.InProgress e) {
                requeueLater(tag, messageId, e.retryAfter(), "a copy is still being applied");
            } catch (IdempotencyException.Unavailable e) {
                requeueLater(tag, messageId, e.retryAfter(), "the idempotency store is unreachable");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                requeueLater(tag, messageId, Duration.ZERO, "interrupted");
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "Applying payment " + messageId + " failed; it is requeued", e);
                requeueLater(tag, messageId, Duration.ofMillis(requeueMaxMillis), "failed: " + e);
            }
        }

        private void deadLetter(long tag, String messageId, String reason) throws IOException {
            getChannel().basicReject(tag, false);
            counts.get("dead-lettered").incrementAndGet();
            log(Level.WARNING, "dead-lettered", messageId, "reason=\"" + reason.replace('"', '\'') + "\"");
        }

        /**
         * Not acknowledged, not applied: back to the queue after a pause (the consumer's one prefetched
         * message stays out meanwhile, so a copy does not spin between the broker and this consumer).
         */
        private void requeueLater(long tag, String messageId, Duration retryAfter, String reason) {
            long delay = Math.min(retryAfter.toMillis(), requeueMaxMillis);
            counts.get("requeued").incrementAndGet();
            log(Level.FINE, "requeued", messageId, "reason=\"" + reason + "\" after-ms=" + delay);
            scheduler.schedule(() -> {
                try {
                    getChannel().basicNack(tag, false, true);
                } catch (IOException | RuntimeException e) {
                    // the channel closed meanwhile: the broker requeues the message by itself
                }
            }, delay, TimeUnit.MILLISECONDS);
        }
    }

    private static void log(Level level, String outcome, String messageId, String details) {
        if (LOG.isLoggable(level)) {
            LOG.log(level, "payment-consumer outcome=" + outcome + " message-id=\"" + messageId + "\" " + details);
        }
    }

    private static <T> T managed(String name, Class<T> type) {
        try {
            return type.cast(new InitialContext().lookup(name));
        } catch (NamingException e) {
            throw new IllegalStateException("No " + name + " on this server (on Open Liberty, enable concurrent-3.0)", e);
        }
    }
}
