package io.idemkey.core;

import io.idemkey.IdempotencyException;
import jakarta.json.bind.Jsonb;
import jakarta.json.bind.JsonbException;

import java.lang.reflect.Constructor;
import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;

/**
 * The outcome of an idempotent call as a record keeps it, in the form of a {@link StoredResponse}
 * (so that every store, the replay cache and the size limit serve calls as they serve HTTP):
 * <ul>
 * <li>a returned value: status 200, its JSON-B text as the body;</li>
 * <li>{@code null} or {@code void}: status 204, no body;</li>
 * <li>a recorded exception: status 200 with the header {@code Idemkey-Exception: <class name>} and the
 *     message as the body ({@code Idemkey-Message: none} when it had none).</li>
 * </ul>
 */
final class CallOutcome {

    static final String EXCEPTION = "Idemkey-Exception";
    static final String NO_MESSAGE = "Idemkey-Message";

    private CallOutcome() {
    }

    static StoredResponse returned(Jsonb jsonb, Object value, Type type) {
        if (value == null) {
            return new StoredResponse(204, List.of(), new byte[0]);
        }
        String json = type instanceof Class<?> c && (c == Object.class || c.isPrimitive()) ? jsonb.toJson(value)
                : jsonb.toJson(value, type);
        return new StoredResponse(200, List.of(), json.getBytes(StandardCharsets.UTF_8));
    }

    static StoredResponse thrown(Exception failure) {
        String message = failure.getMessage();
        List<StoredResponse.Header> headers = message == null
                ? List.of(new StoredResponse.Header(EXCEPTION, failure.getClass().getName()), new StoredResponse.Header(NO_MESSAGE, "none"))
                : List.of(new StoredResponse.Header(EXCEPTION, failure.getClass().getName()));
        return new StoredResponse(200, headers, message == null ? new byte[0] : message.getBytes(StandardCharsets.UTF_8));
    }

    /** The recorded exception, if the outcome is one. */
    static Optional<Exception> failure(StoredResponse outcome, CallPolicy policy, String key) {
        Optional<String> className = outcome.header(EXCEPTION);
        if (className.isEmpty()) {
            return Optional.empty();
        }
        String message = outcome.header(NO_MESSAGE).isPresent() ? null : new String(outcome.body(), StandardCharsets.UTF_8);
        return Optional.of(recreate(className.get(), message, policy, key));
    }

    /** The recorded value, read back as the call's result type. */
    static Object value(Jsonb jsonb, StoredResponse outcome, Type type, String key) {
        if (outcome.status() == 204 || type == void.class || type == Void.class) {
            return null;
        }
        try {
            return jsonb.fromJson(new String(outcome.body(), StandardCharsets.UTF_8), type);
        } catch (JsonbException e) {
            throw new IllegalStateException("The recorded result of the key '" + key + "' cannot be read as " + type.getTypeName()
                    + " (has the result's class changed since it was recorded?): " + e.getMessage(), e);
        }
    }

    /**
     * An exception of the recorded class with the recorded message; only of a class the policy still
     * records (a record never makes this code instantiate an arbitrary class), else a
     * {@link IdempotencyException.RecordedFailure} carrying both.
     */
    private static Exception recreate(String className, String message, CallPolicy policy, String key) {
        try {
            Class<?> type = load(className, policy);
            if (type != null && Exception.class.isAssignableFrom(type) && policy.records(type)) {
                try {
                    Constructor<?> withMessage = type.getConstructor(String.class);
                    return (Exception) withMessage.newInstance(message);
                } catch (NoSuchMethodException noMessageConstructor) {
                    Constructor<?> withCause = type.getConstructor(String.class, Throwable.class);
                    return (Exception) withCause.newInstance(message, null);
                }
            }
        } catch (ReflectiveOperationException | LinkageError | RuntimeException cannotRecreate) {
            // fall through: the class and message still reach the caller
        }
        return new IdempotencyException.RecordedFailure(key, className, message);
    }

    /** The class as the recorded exception types' loaders see it (the application's, not this library's). */
    private static Class<?> load(String className, CallPolicy policy) {
        for (Class<?> recorded : policy.recordedExceptions()) {
            try {
                return Class.forName(className, false, recorded.getClassLoader());
            } catch (ClassNotFoundException notThere) {
                // try the next one
            }
        }
        return null;
    }
}
