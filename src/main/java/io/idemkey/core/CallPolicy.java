package io.idemkey.core;

import java.util.List;
import java.util.Objects;

/**
 * How one idempotent method or programmatic call behaves, resolved once: its scope, the policy it
 * shares with HTTP endpoints (TTLs, excluded fields, failure mode, in-flight wait; {@code required}
 * is always true: a call without a key is refused), and the exceptions that are recorded outcomes.
 * Immutable.
 */
public record CallPolicy(String scope, IdempotencyPolicy policy, List<Class<? extends Exception>> recordedExceptions) {

    public CallPolicy {
        Objects.requireNonNull(scope, "scope");
        Objects.requireNonNull(policy, "policy");
        if (scope.isBlank()) {
            throw new IllegalArgumentException("the scope must not be blank");
        }
        recordedExceptions = List.copyOf(recordedExceptions);
    }

    /** Whether this exception is a recorded outcome (its class or a superclass is listed). */
    public boolean records(Throwable failure) {
        return recordedExceptions.stream().anyMatch(type -> type.isInstance(failure));
    }

    /** Whether a recorded exception of this class may be re-created (it is one the policy lists). */
    boolean records(Class<?> failureClass) {
        return recordedExceptions.stream().anyMatch(type -> type.isAssignableFrom(failureClass));
    }
}
