package io.idemkey.cdi;

import io.idemkey.Idempotency;
import io.idemkey.core.CallPolicy;
import io.idemkey.core.IdempotencyPolicy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import java.lang.reflect.Type;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/** {@link Idempotency} for injection: calls on the runtime's engine, recorded with their transaction. */
@ApplicationScoped
public class ProgrammaticIdempotency implements Idempotency {

    private static final Duration DEFAULT_TTL = Duration.ofHours(24);
    private static final Duration DEFAULT_LOCK_TTL = Duration.ofSeconds(30);

    @Inject
    IdempotencyRuntime runtime;

    @Override
    public Call scope(String scope) {
        Objects.requireNonNull(scope, "scope");
        if (scope.isBlank()) {
            throw new IllegalArgumentException("the scope must not be blank");
        }
        return new Options(runtime, scope, DEFAULT_TTL, DEFAULT_LOCK_TTL, Duration.ZERO, List.of(), List.of(), Set.of(),
                runtime.settings().failOpen());
    }

    /** One immutable set of options; the policy is checked as each setter returns (as at deployment). */
    private record Options(IdempotencyRuntime runtime, String scope, Duration ttl, Duration lockTtl, Duration inFlightWait,
                           List<Class<? extends Exception>> recorded, List<Object> arguments, Set<String> excludeFields,
                           boolean failOpen) implements Call {

        Options {
            policy(scope, ttl, lockTtl, inFlightWait, recorded, excludeFields, failOpen); // fails here, not at the call
        }

        @Override
        public Call ttl(Duration ttl) {
            return new Options(runtime, scope, ttl, lockTtl, inFlightWait, recorded, arguments, excludeFields, failOpen);
        }

        @Override
        public Call lockTtl(Duration lockTtl) {
            return new Options(runtime, scope, ttl, lockTtl, inFlightWait, recorded, arguments, excludeFields, failOpen);
        }

        @Override
        public Call inFlightWait(Duration wait) {
            return new Options(runtime, scope, ttl, lockTtl, wait, recorded, arguments, excludeFields, failOpen);
        }

        @Override
        @SafeVarargs
        public final Call recording(Class<? extends Exception>... exceptions) {
            return new Options(runtime, scope, ttl, lockTtl, inFlightWait, List.of(exceptions), arguments, excludeFields, failOpen);
        }

        @Override
        public Call arguments(Object... arguments) {
            return new Options(runtime, scope, ttl, lockTtl, inFlightWait, recorded,
                    java.util.Collections.unmodifiableList(Arrays.asList(arguments.clone())), excludeFields, failOpen);
        }

        @Override
        public Call excludeFields(String... fieldNames) {
            return new Options(runtime, scope, ttl, lockTtl, inFlightWait, recorded, arguments, Set.of(fieldNames), failOpen);
        }

        @Override
        public Call failOpen(boolean failOpen) {
            return new Options(runtime, scope, ttl, lockTtl, inFlightWait, recorded, arguments, excludeFields, failOpen);
        }

        @Override
        public <T, E extends Exception> T call(String key, Class<T> type, Work<T, E> work) throws E {
            return call(key, (Type) type, work);
        }

        @Override
        public <T, E extends Exception> T call(String key, Type type, Work<T, E> work) throws E {
            Objects.requireNonNull(type, "type");
            Objects.requireNonNull(work, "work");
            return runtime.calls().call(policy(scope, ttl, lockTtl, inFlightWait, recorded, excludeFields, failOpen), key,
                    type, arguments, runtime.callStoreCalls(), work);
        }

        @Override
        public <E extends Exception> void run(String key, VoidWork<E> work) throws E {
            Objects.requireNonNull(work, "work");
            call(key, void.class, () -> {
                work.run();
                return null;
            });
        }

        private static CallPolicy policy(String scope, Duration ttl, Duration lockTtl, Duration inFlightWait,
                                         List<Class<? extends Exception>> recorded, Set<String> excludeFields, boolean failOpen) {
            return new CallPolicy(scope, new IdempotencyPolicy(ttl, lockTtl, true, excludeFields, failOpen, inFlightWait), recorded);
        }
    }
}
