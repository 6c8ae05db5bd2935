package io.idemkey.client;

import io.idemkey.config.ConfigLookup;
import jakarta.interceptor.InvocationContext;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.ProcessingException;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.Response;

import java.io.InputStream;
import java.io.Reader;
import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Makes a MicroProfile Rest Client method carrying {@code @IdempotencyKey} (the same annotation that
 * guards the server's method, on a shared interface) retry safely: one key per call, kept across
 * its attempts, retried as {@link RetryPolicy} says ({@code <interface>/<method>/idempotency.client.*}
 * overrides). MicroProfile Rest Client invokes the CDI interceptors bound to interface methods:
 * Idemkey's interceptor for {@code @IdempotencyKey} hands the calls on a client proxy to
 * {@link #retrySafely} (one interceptor for both sides: a resource class pays for one interceptor
 * instance per resource instance, not two).
 *
 * <p>The caller sees what the Rest Client would show it: the method's result (a {@link Response}
 * carries {@code Idempotent-Replayed}), or the exception of a final {@code 4xx}; and
 * {@link KeyReusedException} or {@link RetriesExhaustedException} as the retrying client's own
 * ends. A method taking a {@code @HeaderParam("Idempotency-Key")} parameter supplies its own key.
 *
 * <p>It runs where Idemkey's interceptor runs ({@code PLATFORM_AFTER + 900}: after MicroProfile
 * Fault Tolerance's and bean validation's), so that each attempt is the HTTP call itself.
 */
public final class RestClientRetries {

    /** Each guarded method's loop, with the method's policy read once. */
    private static final Map<Method, RetryLoop> LOOPS = new ConcurrentHashMap<>();
    private static final String KEY_DATA = RestClientRetries.class.getName() + ".key";

    private RestClientRetries() {
    }

    /** The call on a client proxy ({@link #clientCall}), retried safely. */
    public static Object retrySafely(InvocationContext invocation) throws Exception {
        Method method = invocation.getMethod();
        RetryLoop loop = LOOPS.computeIfAbsent(method, RestClientRetries::loopOf);
        // Kept in the invocation's data: an outer interceptor retrying the whole call (Fault Tolerance's
        // @Retry after RetriesExhaustedException) proceeds again with the same key.
        String key = suppliedKey(method, invocation.getParameters()).orElseGet(() -> (String) invocation.getContextData()
                .computeIfAbsent(KEY_DATA, k -> UUID.randomUUID().toString()));
        ClientCalls.Call call = new ClientCalls.Call(method, key);
        String description = method.getDeclaringClass().getSimpleName() + "." + method.getName() + "()";
        try {
            return loop.run(description, key, () -> attempt(invocation, call)).answer().outcome();
        } catch (Undeclared e) {
            throw e.getCause();
        }
    }

    /**
     * The method's loop, with its policy; refused for a method whose calls cannot be retried safely:
     * an asynchronous one (its answer arrives after the interceptor returned), or one taking a
     * stream (a retry would send it empty under the same key, and meet a 422).
     */
    static RetryLoop loopOf(Method method) {
        String name = method.getDeclaringClass().getName() + "." + method.getName() + "()";
        if (CompletionStage.class.isAssignableFrom(method.getReturnType())) {
            throw new UnsupportedOperationException("Idemkey cannot retry the asynchronous Rest Client method " + name
                    + " safely: call a synchronous method (or use IdempotentRequests) for an operation guarded by"
                    + " @IdempotencyKey");
        }
        for (Class<?> parameter : method.getParameterTypes()) {
            if (InputStream.class.isAssignableFrom(parameter) || Reader.class.isAssignableFrom(parameter)) {
                throw new UnsupportedOperationException("Idemkey cannot retry the Rest Client method " + name + " safely:"
                        + " its " + parameter.getSimpleName() + " parameter can be sent only once, and a retry would send"
                        + " it empty under the same key; take the entity as bytes, a String or an object");
            }
        }
        return RetryLoop.of(RetryPolicy.from(ConfigLookup.microProfile(), method.getDeclaringClass(), method));
    }

    /** One HTTP call: what the proxy returned or threw. */
    private static Outcome attempt(InvocationContext invocation, ClientCalls.Call call) {
        ClientCalls.Call outer = ClientCalls.enter(call);
        try {
            Object result = invocation.proceed();
            return new Outcome(result, null, result instanceof Response response ? response : null);
        } catch (WebApplicationException answered) {
            return new Outcome(null, answered, originalResponse(answered));
        } catch (ProcessingException | Undeclared e) {
            throw e;
        } catch (Exception other) {
            throw new Undeclared(other);
        } finally {
            ClientCalls.exit(outer);
        }
    }

    /**
     * A call on a client proxy: an interface method invoked on something that is not an object of a
     * class implementing it (the server's resource is such an object).
     */
    public static boolean clientCall(Method method, Object target) {
        Class<?> api = method.getDeclaringClass();
        return api.isInterface() && (target == null || Proxy.isProxyClass(target.getClass()) || !api.isInstance(target));
    }

    /**
     * The response as the server sent it. RESTEasy (Open Liberty) hands the caller a sanitized copy
     * without body and headers (no problem, no {@code Retry-After}); its {@code unwrap()} returns the
     * exception with the original.
     */
    private static Response originalResponse(WebApplicationException answered) {
        try {
            Method unwrap = answered.getClass().getMethod("unwrap");
            if (WebApplicationException.class.isAssignableFrom(unwrap.getReturnType())
                    && unwrap.invoke(answered) instanceof WebApplicationException original && original.getResponse() != null) {
                return original.getResponse();
            }
        } catch (ReflectiveOperationException | RuntimeException noOriginal) {
            // the exception's own response is the original
        }
        return answered.getResponse();
    }

    private static Optional<String> suppliedKey(Method method, Object[] parameters) {
        Annotation[][] annotations = method.getParameterAnnotations();
        for (int i = 0; i < annotations.length && i < parameters.length; i++) {
            for (Annotation annotation : annotations[i]) {
                if (annotation instanceof HeaderParam header && header.value().equalsIgnoreCase(IdempotentRequests.KEY_HEADER)
                        && parameters[i] != null && !parameters[i].toString().isBlank()) {
                    return Optional.of(parameters[i].toString());
                }
            }
        }
        return Optional.empty();
    }

    /**
     * What one attempt came back with: a result, or the exception of an answer of 400 and above; and
     * the response as the server sent it, where there is one.
     */
    private record Outcome(Object result, WebApplicationException answered, Response response) implements RetryLoop.Answer {

        /**
         * The answer's status; a result without a response is a success, and an exception without one
         * (a {@code ResponseExceptionMapper} of the application's that kept none) is final: 0, which
         * nothing retries.
         */
        @Override
        public int status() {
            return response != null ? response.getStatus() : answered != null ? 0 : 200;
        }

        @Override
        public Optional<String> header(String name) {
            return response == null ? Optional.empty() : Optional.ofNullable(response.getHeaderString(name));
        }

        @Override
        public Problem problem() {
            return response == null ? Problem.parse(status(), null) : ResponseAnswer.problemOf(response);
        }

        @Override
        public void discard() {
            if (response != null) {
                new ResponseAnswer(response).discard();
            }
        }

        /** What the caller gets: the result, or the exception as the Rest Client threw it. */
        Object outcome() throws WebApplicationException {
            if (answered != null) {
                throw answered;
            }
            return result;
        }
    }

    /** A checked exception of the proxy, carried through the retry loop untouched. */
    private static final class Undeclared extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Undeclared(Exception cause) {
            super(cause);
        }

        @Override
        public synchronized Exception getCause() {
            return (Exception) super.getCause();
        }
    }
}
