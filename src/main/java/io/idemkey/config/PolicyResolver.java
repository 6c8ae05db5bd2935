package io.idemkey.config;

import io.idemkey.FailureMode;
import io.idemkey.Idempotent;
import io.idemkey.IdempotencyKey;
import io.idemkey.core.CallPolicy;
import io.idemkey.core.IdempotencyPolicy;
import io.idemkey.resource.ResourceMethods;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Resolves the {@link IdempotencyPolicy} of a resource method from its {@code @IdempotencyKey}
 * (on the method, else on its class; either may sit on an implemented interface) and the
 * configuration overrides, MicroProfile Fault Tolerance
 * style, most specific first:
 * <pre>
 * &lt;fqcn&gt;/&lt;method&gt;/IdempotencyKey/&lt;member&gt;
 * &lt;fqcn&gt;/IdempotencyKey/&lt;member&gt;
 * IdempotencyKey/&lt;member&gt;
 * the annotation's value
 * </pre>
 * The policy of an {@code @Idempotent} method is resolved the same way, under the name
 * {@code Idempotent} ({@link #resolveCall}). Every value is validated; an invalid one throws
 * {@link ConfigurationException} naming where it came from.
 */
public final class PolicyResolver {

    private static final String ANNOTATION = IdempotencyKey.class.getSimpleName();
    private static final String CALL_ANNOTATION = Idempotent.class.getSimpleName();

    private final ConfigLookup config;
    private final IdempotencySettings settings;

    public PolicyResolver(ConfigLookup config, IdempotencySettings settings) {
        this.config = config;
        this.settings = settings;
    }

    /**
     * The annotation that guards this method of this resource class, if any, most specific first:
     * on the method (as the class has it, then the superclass method it overrides, then the
     * interface method it implements), on the class, on an interface that declares the method.
     */
    public static Optional<IdempotencyKey> annotation(Class<?> resourceClass, Method method) {
        return methodAnnotation(resourceClass, method).or(() -> typeAnnotation(resourceClass, method));
    }

    /** The annotation on the method itself, or on a method it overrides or implements. */
    public static Optional<IdempotencyKey> methodAnnotation(Class<?> resourceClass, Method method) {
        for (Method declaration : ResourceMethods.declarations(resourceClass, method)) {
            IdempotencyKey onMethod = declaration.getAnnotation(IdempotencyKey.class);
            if (onMethod != null) {
                return Optional.of(onMethod);
            }
        }
        return Optional.empty();
    }

    private static Optional<IdempotencyKey> typeAnnotation(Class<?> resourceClass, Method method) {
        IdempotencyKey onClass = resourceClass.getAnnotation(IdempotencyKey.class);
        if (onClass != null) {
            return Optional.of(onClass);
        }
        for (Method declaration : ResourceMethods.declarations(resourceClass, method)) {
            IdempotencyKey onType = declaration.getDeclaringClass().getAnnotation(IdempotencyKey.class);
            if (onType != null) {
                return Optional.of(onType);
            }
        }
        return Optional.empty();
    }

    /** The method's policy, or empty if it is not annotated. */
    public Optional<IdempotencyPolicy> resolve(Class<?> resourceClass, Method method) {
        return annotation(resourceClass, method).map(annotation -> resolve(resourceClass, method, annotation));
    }

    private IdempotencyPolicy resolve(Class<?> type, Method method, IdempotencyKey annotation) {
        Member<Boolean> required = member(type, method, ANNOTATION, "required", annotation.required(), Values::bool);
        return policy(type, method, ANNOTATION, new Defaults(annotation.ttlHours(), annotation.lockTtlSeconds(),
                annotation.excludeFields(), annotation.failureMode(), annotation.inFlightWaitSeconds()), required.value);
    }

    /**
     * The policy of an {@link Idempotent} method, with the same overrides under the name
     * {@code Idempotent} ({@code <fqcn>/<method>/Idempotent/<member>}, ...), its scope (the method's
     * own, {@code <fqcn>.<method>}, unless the annotation names one) and its recorded exceptions.
     */
    public CallPolicy resolveCall(Class<?> type, Method method, Idempotent annotation) {
        IdempotencyPolicy policy = policy(type, method, CALL_ANNOTATION, new Defaults(annotation.ttlHours(),
                annotation.lockTtlSeconds(), annotation.excludeFields(), annotation.failureMode(),
                annotation.inFlightWaitSeconds()), true);
        String scope = annotation.scope().isBlank() ? type.getName() + "." + method.getName() : annotation.scope();
        return new CallPolicy(scope, policy, List.of(annotation.recordedExceptions()));
    }

    /** The annotation members a policy is made of. */
    private record Defaults(int ttlHours, int lockTtlSeconds, String[] excludeFields, FailureMode failureMode,
                            int inFlightWaitSeconds) {
    }

    private IdempotencyPolicy policy(Class<?> type, Method method, String annotation, Defaults defaults, boolean required) {
        Member<Integer> ttlHours = member(type, method, annotation, "ttlHours", defaults.ttlHours(),
                (p, v) -> Values.integer(p, v, 1, 8760));
        Values.inRange(ttlHours.source, ttlHours.value, 1, 8760);
        Member<Integer> lockTtl = member(type, method, annotation, "lockTtlSeconds", defaults.lockTtlSeconds(),
                (p, v) -> Values.integer(p, v, 1, 86_400));
        Values.inRange(lockTtl.source, lockTtl.value, 1, 86_400);
        if ((long) ttlHours.value * 3600 <= lockTtl.value) {
            throw new ConfigurationException(lockTtl.source, "(" + lockTtl.value + " s) must be shorter than "
                    + ttlHours.source + " (" + ttlHours.value + " h)");
        }
        Member<String[]> excludeFields = member(type, method, annotation, "excludeFields", defaults.excludeFields(),
                (p, v) -> IdempotencySettings.list(v).toArray(String[]::new));
        for (String field : excludeFields.value) {
            if (field.isBlank()) {
                throw new ConfigurationException(excludeFields.source, "must not contain a blank field name");
            }
        }
        Member<FailureMode> failureMode = member(type, method, annotation, "failureMode", defaults.failureMode(),
                (p, v) -> Values.choice(p, v, FailureMode.class));
        Member<Integer> wait = member(type, method, annotation, "inFlightWaitSeconds", defaults.inFlightWaitSeconds(),
                (p, v) -> Values.integer(p, v, 0, 60));
        Values.inRange(wait.source, wait.value, 0, 60);
        boolean failOpen = switch (failureMode.value) {
            case OPEN -> true;
            case CLOSED -> false;
            case DEFAULT -> settings.failOpen();
        };
        return new IdempotencyPolicy(Duration.ofHours(ttlHours.value), Duration.ofSeconds(lockTtl.value),
                required, Set.copyOf(Arrays.asList(excludeFields.value)), failOpen,
                Duration.ofSeconds(wait.value));
    }

    private <T> Member<T> member(Class<?> type, Method method, String annotation, String name, T annotationValue,
                                 Parser<T> parser) {
        for (String property : new String[]{
                type.getName() + "/" + method.getName() + "/" + annotation + "/" + name,
                type.getName() + "/" + annotation + "/" + name,
                annotation + "/" + name}) {
            Optional<String> value = config.get(property);
            if (value.isPresent()) {
                return new Member<>(parser.parse(property, value.get()), property);
            }
        }
        return new Member<>(annotationValue,
                type.getName() + "." + method.getName() + " @" + annotation + "(" + name + ")");
    }

    /** A resolved member value and where it came from, for error messages. */
    private record Member<T>(T value, String source) {
    }

    @FunctionalInterface
    private interface Parser<T> {
        T parse(String property, String value);
    }
}
