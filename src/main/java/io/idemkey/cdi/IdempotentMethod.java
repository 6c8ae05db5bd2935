package io.idemkey.cdi;

import io.idemkey.Idempotent;
import io.idemkey.config.PolicyResolver;
import io.idemkey.core.CallPolicy;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Type;
import java.lang.reflect.TypeVariable;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;

/**
 * An {@link Idempotent} method as Idempotent calls need it, resolved once: its policy, which
 * argument is the key, and the type its result is read back as. Also the one statement of where
 * the annotation can be honoured, for the deployment check.
 *
 * @param keyIndex   the position of the {@link Idempotent.Key} parameter
 * @param resultType the method's generic return type
 */
record IdempotentMethod(CallPolicy policy, int keyIndex, Type resultType) {

    static IdempotentMethod resolve(Method method, PolicyResolver resolver) {
        Idempotent annotation = method.getAnnotation(Idempotent.class);
        return new IdempotentMethod(resolver.resolveCall(method.getDeclaringClass(), method, annotation),
                keyIndexes(method).get(0), method.getGenericReturnType());
    }

    /** The arguments that are fingerprinted: all but the key. */
    List<Object> otherArguments(Object[] arguments) {
        List<Object> others = new ArrayList<>(arguments.length);
        for (int i = 0; i < arguments.length; i++) {
            if (i != keyIndex) {
                others.add(arguments[i]);
            }
        }
        return others;
    }

    /**
     * Why an annotation on this method cannot be honoured, if it cannot: the interceptor would never
     * run, or could not record the outcome. Silently unguarded is never an option.
     */
    static Optional<String> misplaced(Method method) {
        boolean annotated = method.isAnnotationPresent(Idempotent.class);
        List<Integer> keys = keyIndexes(method);
        String name = method.getDeclaringClass().getName() + "." + method.getName() + "()";
        if (!annotated) {
            return keys.isEmpty() ? Optional.empty() : Optional.of("@Idempotent.Key on a parameter of " + name
                    + ", which is not @Idempotent: nothing would guard it. Annotate the method with @Idempotent.");
        }
        int modifiers = method.getModifiers();
        if (Modifier.isPrivate(modifiers) || Modifier.isStatic(modifiers) || Modifier.isFinal(modifiers)
                || Modifier.isFinal(method.getDeclaringClass().getModifiers())) {
            return Optional.of("@Idempotent on " + name + ", which is private, static or final (or in a final class):"
                    + " CDI cannot intercept it, so it would never be guarded. Make it a non-final instance method"
                    + " of a CDI bean, called through the bean.");
        }
        if (keys.size() != 1) {
            return Optional.of("@Idempotent on " + name + ", which has " + (keys.isEmpty() ? "no parameter" : keys.size()
                    + " parameters") + " marked @Idempotent.Key: mark exactly one, the argument that is the key.");
        }
        Class<?> result = method.getReturnType();
        if (CompletionStage.class.isAssignableFrom(result) || Future.class.isAssignableFrom(result)) {
            return Optional.of("@Idempotent on " + name + ", which returns " + result.getSimpleName() + ": an"
                    + " asynchronous result cannot be recorded when the method returns. Make the method synchronous"
                    + " (and call it asynchronously), or use Idempotency inside the asynchronous work.");
        }
        if (method.getGenericReturnType() instanceof TypeVariable<?>) {
            return Optional.of("@Idempotent on " + name + ", which returns the type variable "
                    + method.getGenericReturnType() + ": its recorded result could not be read back. Declare a concrete type.");
        }
        return Optional.empty();
    }

    private static List<Integer> keyIndexes(Method method) {
        List<Integer> indexes = new ArrayList<>();
        Annotation[][] annotations = method.getParameterAnnotations();
        for (int i = 0; i < annotations.length; i++) {
            for (Annotation annotation : annotations[i]) {
                if (annotation.annotationType() == Idempotent.Key.class) {
                    indexes.add(i);
                }
            }
        }
        return indexes;
    }
}
