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

import java.lang.ref.WeakReference;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
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

    /**
     * An asynchronous request: its method returns on a pooled thread, its request ends on another.
     * The pooled thread, alive and idle afterwards, keeps nothing of it: a value left in one of its
     * thread-locals would keep the request, its execution and engine (the replay cache), and the
     * application's classes alive, after an undeploy too.
     */
    @Test
    void aPooledThreadKeepsNothingOfAnAsynchronousRequestOnceItsMethodReturned() throws Exception {
        CountDownLatch done = new CountDownLatch(1);
        CompletableFuture<WeakReference<GuardedRequest>> served = new CompletableFuture<>();
        Thread pooled = new Thread(() -> {
            try {
                served.complete(serveAsynchronously());
                done.await(); // the pool keeps the thread
            } catch (Throwable e) {
                served.completeExceptionally(e);
            }
        }, "pooled-request-thread");
        pooled.start();
        try {
            WeakReference<GuardedRequest> request = served.get(10, TimeUnit.SECONDS);
            current.requestEnded(new Object()); // its request context ends on another thread
            for (int i = 0; i < 50 && request.get() != null; i++) {
                System.gc();
                Thread.sleep(20);
            }
            assertNull(request.get(), "the idle pooled thread still holds the asynchronous request");
        } finally {
            done.countDown();
            pooled.join();
        }
    }

    /** What the filter and the interceptor do on the request's thread for a method that answers asynchronously. */
    private WeakReference<GuardedRequest> serveAsynchronously() throws Exception {
        GuardedRequest request = guarded("async-" + System.nanoTime());
        current.clearAwaiting();
        current.awaitMethod(request);
        GuardedRequest outer = current.methodStarts(request);
        request.markAsynchronous(); // an AsyncResponse parameter, or a CompletionStage returned
        current.methodReturned(request);
        current.methodEnded(outer);
        current.clearAwaiting(); // the response filter, when it runs on this thread
        return new WeakReference<>(request);
    }
}
