package io.idemkey.store.redis;

import redis.clients.jedis.Connection;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.Response;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.exceptions.JedisMovedDataException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * The store's calls that are ready at the same moment, across requests, sent together
 * ("smart batching"): one queue per master; the caller that finds no batch of that master in
 * flight takes whatever is queued (its own call included, up to {@link #MAX_BATCH}), writes it as
 * one pipeline on one pooled connection, reads the replies, and hands each caller its own. Calls
 * that arrive meanwhile queue up, and go out together in the next batch, sent by one of their
 * callers: the sender, once it has read its batch's replies, gives up the lane and wakes the caller
 * at the head of the queue first, then the callers it answered. A lone call therefore
 * goes out at once on its caller's thread, as it would without this class; under load, one write
 * and one read on each side carry many calls.
 *
 * <p>Each call is still its own command or commands (a script call, or an acquire's {@code SET}
 * and {@code PTTL}), run by Redis in the pipeline's order; a pipeline is not a transaction, and no
 * call's reply depends on another's. What one call
 * gets is what it would have got alone: its reply, or its error reply (as Jedis's typed exception:
 * {@code NOSCRIPT}, {@code MOVED}, {@code -LOADING}, ...), or, when the connection could not be had
 * or broke or timed out, that failure, which every call the batch carried gets alike. The caller
 * classifies and retries as it does for a call of its own ({@link RedisIdempotencyStore}); a batch
 * is never sent again as a whole. One thing differs: when a batch timed out (the master did not
 * answer within the read timeout), the calls queued behind it for that master get the same timeout
 * without being sent (they did not run), instead of each waiting for a read timeout of its own in
 * turn, one batch after another; so a call gives up within about one read timeout, as alone.
 *
 * <p>Under load a batch may wait a little for company ({@code linger}): a sender whose master's
 * previous batch carried more than one call (calls are arriving together) waits the linger out
 * after taking what is queued, then takes what queued meanwhile too (up to {@link #MAX_BATCH}).
 * Redis's cost is mostly per socket read and write, not per command, so fewer, larger batches cost
 * it less per call. A call whose master's previous batch carried one call goes out at once: one
 * caller alone never waits, and after a burst at most one batch waits before calls go out at once
 * again.
 */
final class CoalescedCalls {

    /** At most this many calls in one pipeline: a batch's replies are read before any caller gets its own. */
    static final int MAX_BATCH = 64;
    /** How long a waiting caller sleeps before it looks again on its own (a safety net; it is woken). */
    private static final long RECHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private final RedisScript script;
    private final int maxBatch;
    private final long lingerNanos;
    private final ConcurrentHashMap<HostAndPort, Lane> lanes = new ConcurrentHashMap<>();
    private final LongAdder pipelines = new LongAdder();
    private final LongAdder calls = new LongAdder();
    private final LongAdder unanswered = new LongAdder();
    private final LongAdder notSent = new LongAdder();

    CoalescedCalls(RedisScript script, int maxBatch, Duration linger) {
        if (maxBatch < 1) {
            throw new IllegalArgumentException("a batch holds at least one call");
        }
        this.script = script;
        this.maxBatch = maxBatch;
        this.lingerNanos = linger.toNanos();
    }

    /**
     * Runs the script on {@code master} with these keys and arguments, by its SHA-1 or by its text,
     * in a batch with whatever other calls to that master are ready; returns its reply.
     *
     * @throws JedisException as Jedis would for this call alone: its error reply, or the
     *                        connection's failure
     */
    Object call(Masters masters, HostAndPort master, List<byte[]> keys, List<byte[]> argv, boolean text) {
        return call(masters, master, pipeline -> {
            Response<Object> reply = text ? pipeline.eval(script.source(), keys, argv)
                    : pipeline.evalsha(script.sha1(), keys, argv);
            return reply::get;
        });
    }

    /**
     * Sends {@code request}'s commands to {@code master} in a batch with whatever other calls to
     * that master are ready; returns its reply.
     *
     * @throws JedisException as Jedis would for these commands alone: an error reply, or the
     *                        connection's failure
     */
    Object call(Masters masters, HostAndPort master, Request request) {
        Call call = new Call(request);
        lanes.computeIfAbsent(master, Lane::new).run(masters, call);
        return call.reply();
    }

    /** A call's commands, added to a batch's pipeline; what it returns reads the call's reply once the batch is answered. */
    @FunctionalInterface
    interface Request {
        Supplier<Object> addTo(Pipeline pipeline);
    }

    /** Pipelines sent since the store opened. */
    long pipelines() {
        return pipelines.sum();
    }

    /** Calls those pipelines carried. */
    long calls() {
        return calls.sum();
    }

    /** Asks the node that answered MOVED for the slots; if that fails, the redirected call's own sending finds out. */
    private static void slotsMoved(Masters masters, Connection connection) {
        try {
            masters.moved(connection);
        } catch (RuntimeException e) {
            // the call follows the redirection as a command of its own, which refreshes the slots too
        }
    }

    /** Calls whose pipeline got no answer (no connection, a broken one, a timeout): each carried call failed alike. */
    long unanswered() {
        return unanswered.sum();
    }

    /** Calls failed without being sent, because the batch before them on their master timed out. */
    long notSent() {
        return notSent.sum();
    }

    /** Calls queued now, on every master (for tests). */
    int queued() {
        int queued = 0;
        for (Lane lane : lanes.values()) {
            queued += lane.queue.size();
        }
        return queued;
    }

    /** One call and, once its batch is answered, its reply or its failure. */
    private static final class Call {
        final Request request;
        final Thread caller = Thread.currentThread();
        private Object reply;
        private RuntimeException failure;
        private volatile boolean done;

        Call(Request request) {
            this.request = request;
        }

        /** Settles the call; its caller learns of it when woken ({@link #wake}), or when it next looks. */
        void answer(Object reply, RuntimeException failure) {
            this.reply = reply;
            this.failure = failure;
            this.done = true; // publishes reply and failure
        }

        void wake() {
            LockSupport.unpark(caller);
        }

        boolean done() {
            return done;
        }

        Object reply() {
            if (failure != null) {
                throw failure;
            }
            return reply;
        }
    }

    /** The calls queued for one master, and whether a batch of them is in flight. */
    private final class Lane {
        private final HostAndPort master;
        private final Queue<Call> queue = new ConcurrentLinkedQueue<>();
        private final AtomicBoolean sending = new AtomicBoolean();
        /** How many calls the lane's last batch carried (written by its sender, under {@link #sending}). */
        private int previousBatch;

        Lane(HostAndPort master) {
            this.master = master;
        }

        /**
         * Queues the call, and returns once it is answered: sent by this thread (when no batch is
         * in flight) or by another caller's. A sender that has read its batch's replies gives up
         * the lane and wakes the caller at the head of the queue first, which then sends the next
         * batch while this one wakes the callers it answered; since it gives up the lane before it
         * looks at the queue, a caller that queued after that look finds the lane free itself.
         */
        void run(Masters masters, Call call) {
            queue.add(call);
            boolean interrupted = false;
            while (!call.done()) {
                if (sending.compareAndSet(false, true)) {
                    List<Call> batch = List.of();
                    try {
                        if (!call.done()) { // else answered in the batch before: the lane goes to the next caller at once
                            batch = drain(maxBatch);
                            if (lingerNanos > 0 && previousBatch > 1 && batch.size() < maxBatch) {
                                interrupted |= linger(); // calls arriving together: wait for company
                                batch.addAll(drain(maxBatch - batch.size()));
                            }
                            previousBatch = batch.size();
                            send(masters, batch);
                        }
                    } finally {
                        sending.set(false);
                        Call next = queue.peek();
                        if (next != null && next != call) {
                            next.wake();
                        }
                        for (Call answered : batch) {
                            if (answered != call) {
                                answered.wake();
                            }
                        }
                    }
                } else {
                    LockSupport.parkNanos(this, RECHECK_NANOS);
                    interrupted |= Thread.interrupted(); // a call in flight cannot be taken back: wait for its reply
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }

        /**
         * Waits the linger out: a wake-up meant for this thread as a caller (a permit left over,
         * or one given as the lane changed hands) does not cut it short. Returns whether the
         * thread was interrupted meanwhile, which ends the wait.
         */
        private boolean linger() {
            long deadline = System.nanoTime() + lingerNanos;
            for (long left = lingerNanos; left > 0; left = deadline - System.nanoTime()) {
                LockSupport.parkNanos(this, left);
                if (Thread.interrupted()) {
                    return true;
                }
            }
            return false;
        }

        /** Up to {@code most} queued calls, in their order. */
        private List<Call> drain(int most) {
            List<Call> batch = new ArrayList<>();
            Call next;
            while (batch.size() < most && (next = queue.poll()) != null) {
                batch.add(next);
            }
            return batch;
        }

        /**
         * The batch as one pipeline on one connection. A node that answered {@code MOVED} is asked
         * for the slots once per batch (as the store does for a call of its own); the call itself
         * gets the redirection, and its caller sends it again where it now belongs. Whatever
         * happens, every call of the batch is answered before this returns.
         */
        private void send(Masters masters, List<Call> batch) {
            pipelines.increment();
            calls.add(batch.size());
            RuntimeException unanswered = null;
            try (Connection connection = masters.connection(master)) {
                Pipeline pipeline = new Pipeline(connection);
                List<Supplier<Object>> responses = new ArrayList<>(batch.size());
                try {
                    for (Call call : batch) {
                        responses.add(call.request.addTo(pipeline));
                    }
                    pipeline.sync(); // every reply is read: the connection goes back to the pool clean
                } catch (RuntimeException | Error e) {
                    connection.setBroken(); // commands written whose replies nobody read: never pooled again
                    throw e;
                }
                boolean moved = false;
                for (int i = 0; i < batch.size(); i++) {
                    try {
                        batch.get(i).answer(responses.get(i).get(), null);
                    } catch (JedisMovedDataException e) {
                        if (!moved) {
                            moved = true;
                            slotsMoved(masters, connection);
                        }
                        batch.get(i).answer(null, e);
                    } catch (RuntimeException e) {
                        batch.get(i).answer(null, e);
                    }
                }
            } catch (RuntimeException e) {
                unanswered = e; // no connection, or it broke or timed out: every call it carried that has no answer
            } finally {
                for (Call call : batch) {
                    if (!call.done()) {
                        CoalescedCalls.this.unanswered.increment();
                        call.answer(null, unanswered != null ? unanswered
                                : new JedisException("the batch ended before this call was answered"));
                    }
                }
            }
            if (unanswered != null && RedisFailures.timedOut(unanswered)) {
                for (Call queued; (queued = queue.poll()) != null; ) {
                    notSent.increment();
                    queued.answer(null, unanswered);
                    queued.wake();
                }
            }
        }
    }
}
