package io.idemkey.core;

import io.idemkey.Idempotency;
import io.idemkey.IdempotencyException;
import jakarta.json.bind.Jsonb;

import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Idempotent calls of methods and lambdas, on the engine that guards HTTP requests (same stores,
 * leases, fencing, replay cache, metrics and log lines; the endpoint label is the call's scope):
 * the key and arguments become a record key and a fingerprint, the engine's {@link Decision}
 * becomes "run the work", "return the recorded outcome", or an {@link IdempotencyException}. Plain
 * Java: the CDI interceptor and {@link Idempotency} call it, tests drive it with a manual clock.
 */
public final class IdempotentCalls {

    /**
     * How a call's store work relates to the caller's transaction: none ({@link #DIRECT}), or the JTA
     * transaction the work runs in (the CDI layer: the key is acquired and released outside it, the
     * outcome recorded with it).
     */
    public interface StoreCalls {

        StoreCalls DIRECT = new StoreCalls() {
            @Override
            public Decision acquire(Supplier<Decision> acquire) {
                return acquire.get();
            }

            @Override
            public void record(Execution execution, StoredResponse outcome, Supplier<StoredResponse> outcomeAtCommit) {
                execution.complete(outcome);
            }

            @Override
            public void release(Execution execution, String reason) {
                execution.release(reason);
            }
        };

        /** Acquires the key (the engine's decision), where other callers see the record at once. */
        Decision acquire(Supplier<Decision> acquire);

        /**
         * The work returned (or threw a recorded exception): record its outcome.
         *
         * @param outcome         the outcome as the work ended
         * @param outcomeAtCommit the outcome written again, for a transaction to take as it commits:
         *                        a returned entity has its generated id and version only once its
         *                        persistence context has flushed (it may throw, as the first did not)
         */
        void record(Execution execution, StoredResponse outcome, Supplier<StoredResponse> outcomeAtCommit);

        /** The work failed: release the key, so that a later call runs again. */
        void release(Execution execution, String reason);
    }

    private final IdempotencyEngine engine;
    private final Fingerprint fingerprints;
    private final Jsonb jsonb;
    private final String keyPrefix;
    private final int maxKeyLength;

    public IdempotentCalls(IdempotencyEngine engine, Fingerprint fingerprints, Jsonb jsonb, String keyPrefix, int maxKeyLength) {
        this.engine = Objects.requireNonNull(engine, "engine");
        this.fingerprints = Objects.requireNonNull(fingerprints, "fingerprints");
        this.jsonb = Objects.requireNonNull(jsonb, "jsonb");
        this.keyPrefix = Objects.requireNonNull(keyPrefix, "keyPrefix");
        this.maxKeyLength = maxKeyLength;
    }

    /**
     * Runs {@code work} at most once per key in the policy's scope.
     *
     * @param key        the key's argument ({@code toString()} is the key)
     * @param resultType the work's result type, for reading a recorded result back ({@code void.class} for none)
     * @param arguments  what must be the same for every call with this key (fingerprinted as JSON-B)
     * @throws IdempotencyException when the work did not run and there is no outcome to return
     * @throws E         what the work threw, or the recorded exception of an earlier call
     */
    public <T, E extends Exception> T call(CallPolicy policy, Object key, Type resultType, List<?> arguments,
                                           StoreCalls storeCalls, Idempotency.Work<T, E> work) throws E {
        String validKey = validKey(key);
        String recordKey = RecordKey.ofCall(keyPrefix, policy.scope(), validKey);
        byte[] fingerprint = fingerprint(policy, arguments);
        Decision decision = storeCalls.acquire(() -> engine.begin(recordKey, validKey, fingerprint, policy.policy(), policy.scope()));
        if (decision instanceof Decision.Proceed proceed) {
            return run(policy, proceed.execution(), resultType, storeCalls, work);
        } else if (decision instanceof Decision.Replay replay) {
            return replay(policy, replay.response(), resultType, validKey);
        } else if (decision instanceof Decision.Conflict conflict) {
            throw new IdempotencyException.InProgress(validKey, conflict.retryAfter());
        } else if (decision instanceof Decision.Mismatch) {
            throw new IdempotencyException.KeyReused(validKey);
        } else if (decision instanceof Decision.RateLimited limited) {
            throw new IdempotencyException.RateLimited(validKey, limited.retryAfter());
        } else if (decision instanceof Decision.Unavailable unavailable) {
            throw new IdempotencyException.Unavailable(validKey, "The idempotency store cannot be reached, and the scope '"
                    + policy.scope() + "' fails closed: the call did not run", unavailable.retryAfter(), null);
        }
        return work.get(); // Decision.Unprotected: fail-open, the engine logged it
    }

    private <T, E extends Exception> T run(CallPolicy policy, Execution execution, Type resultType, StoreCalls storeCalls,
                                           Idempotency.Work<T, E> work) throws E {
        execution.markStarted();
        execution.workBegins();
        T value = null;
        Exception recordedFailure = null;
        try {
            value = work.get();
        } catch (Exception e) {
            if (!policy.records(e)) {
                release(storeCalls, execution, e);
                throw e;
            }
            recordedFailure = e;
        } catch (Error e) {
            release(storeCalls, execution, e);
            throw e;
        } finally {
            execution.workEnded();
        }
        StoredResponse outcome;
        try {
            outcome = recordedFailure != null ? CallOutcome.thrown(recordedFailure) : CallOutcome.returned(jsonb, value, resultType);
        } catch (RuntimeException notSerialisable) {
            // as for a response too large to record: the caller gets its result, a later call runs again
            execution.releaseUnrecorded("the result cannot be written as JSON: " + notSerialisable);
            return rethrowOr(recordedFailure, value);
        }
        T returned = value;
        StoredResponse ended = outcome;
        storeCalls.record(execution, outcome, recordedFailure != null ? () -> ended
                : () -> CallOutcome.returned(jsonb, returned, resultType));
        return rethrowOr(recordedFailure, value);
    }

    private static void release(StoreCalls storeCalls, Execution execution, Throwable failure) {
        try {
            storeCalls.release(execution, "the call failed with " + failure.getClass().getName());
        } catch (RuntimeException releaseFailed) {
            failure.addSuppressed(releaseFailed);
        }
    }

    @SuppressWarnings("unchecked")
    private <T> T replay(CallPolicy policy, StoredResponse outcome, Type resultType, String key) {
        Optional<Exception> failure = CallOutcome.failure(outcome, policy, key);
        if (failure.isPresent()) {
            throw IdempotentCalls.<RuntimeException>sneaky(failure.get());
        }
        return (T) CallOutcome.value(jsonb, outcome, resultType, key);
    }

    private static <T> T rethrowOr(Exception recordedFailure, T value) {
        if (recordedFailure != null) {
            throw IdempotentCalls.<RuntimeException>sneaky(recordedFailure);
        }
        return value;
    }

    /** Re-throws a recorded (possibly checked) exception: the work declared it, so its caller expects it. */
    @SuppressWarnings("unchecked")
    private static <X extends Exception> X sneaky(Exception failure) throws X {
        throw (X) failure;
    }

    private String validKey(Object argument) {
        if (argument == null) {
            throw new IdempotencyException.InvalidKey(null, "the key is null");
        }
        String key = argument.toString();
        if (key.isEmpty()) {
            throw new IdempotencyException.InvalidKey(key, "the key is empty");
        }
        if (key.length() > maxKeyLength) {
            throw new IdempotencyException.InvalidKey(key.substring(0, 32) + "...", "the key is " + key.length()
                    + " characters long, the limit is " + maxKeyLength + " (idempotency.max-key-length)");
        }
        if (key.chars().anyMatch(Character::isISOControl)) {
            throw new IdempotencyException.InvalidKey(key.replaceAll("\\p{Cntrl}", "?"), "the key holds control characters");
        }
        return key;
    }

    private byte[] fingerprint(CallPolicy policy, List<?> arguments) {
        byte[] json = jsonb.toJson(arguments).getBytes(StandardCharsets.UTF_8);
        return fingerprints.of("CALL", policy.scope(), List.of(), true, json, policy.policy().excludeFields());
    }
}
