package io.idemkey.request;

import io.idemkey.core.Decision;
import io.idemkey.core.Execution;
import io.idemkey.core.Fingerprint;
import io.idemkey.core.IdempotencyEngine;
import io.idemkey.core.IdempotencyPolicy;
import io.idemkey.store.memory.InMemoryIdempotencyStore;
import io.idemkey.testing.ManualClock;
import io.idemkey.testing.ManualScheduler;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The end-of-request net: a synchronous guarded request whose context ends while it still holds its
 * key releases it; another request's context ending on the same thread while the method runs (an
 * asynchronous request the method resumed) leaves it alone.
 */
class CurrentRequestTest {

    private static final IdempotencyPolicy POLICY =
            new IdempotencyPolicy(Duration.ofHours(1), Duration.ofSeconds(30), true, Set.of(), false, Duration.ZERO);

    private final ManualClock clock = new ManualClock();
    private final IdempotencyEngine engine = IdempotencyEngine.builder(new InMemoryIdempotencyStore(clock),
            new ManualScheduler(clock)).clock(clock).build();
    private final CurrentRequest current = new CurrentRequest();

    private GuardedRequest guarded(String key) throws NoSuchMethodException {
        byte[] fingerprint = new Fingerprint().of("POST", "/orders", List.of(), true,
                "{}".getBytes(StandardCharsets.UTF_8), Set.of());
        Execution execution = assertInstanceOf(Decision.Proceed.class,
                engine.begin("idempotency::" + key, key, fingerprint, POLICY, "POST /orders")).execution();
        return new GuardedRequest(execution, Object.class.getMethod("toString"), null, result -> Optional.empty());
    }

    @Test
    void anotherRequestEndingOnThisThreadWhileTheMethodRunsKeepsTheKey() throws Exception {
        GuardedRequest publisher = guarded("publisher");
        current.awaitMethod(publisher);
        GuardedRequest outer = current.methodStarts(publisher);

        current.requestEnded(new Object()); // a long-poll request the method resumed ends here

        assertTrue(publisher.execution().isRunning(), "the running method's key is held");
        current.methodEnded(outer);
        current.requestEnded(new Object()); // its own request ends with no response recorded
        assertFalse(publisher.execution().isRunning(), "released once its own request ended");
    }

    @Test
    void aSynchronousRequestEndingWithItsKeyHeldReleasesIt() throws Exception {
        GuardedRequest request = guarded("k1");
        current.awaitMethod(request);
        current.clearAwaiting(); // a later filter failed: the method never ran

        current.requestEnded(new Object());

        assertFalse(request.execution().isRunning());
    }
}
