package io.idemkey.cdi;

import io.idemkey.IdempotencyKey;
import io.idemkey.core.Execution;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ContextNotActiveException;
import jakarta.inject.Inject;
import jakarta.interceptor.AroundInvoke;
import jakarta.interceptor.Interceptor;
import jakarta.interceptor.InvocationContext;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.container.Suspended;
import jakarta.ws.rs.ext.ExceptionMapper;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.util.concurrent.CompletionStage;

/**
 * Tells the guarded execution that the resource method really started: only then is its outcome
 * recorded (Stripe's rule). A request refused before this point (bean validation, an unreadable
 * entity) releases its key.
 *
 * <p>It runs innermost ({@code PLATFORM_AFTER + 900}, after bean validation's interceptor), right
 * before the method body. When the method throws an exception that no {@link ExceptionMapper}
 * handles, no response filter will run, so the key is released here before the error reaches the
 * client.
 */
@IdempotencyKey
@Interceptor
@Priority(Interceptor.Priority.PLATFORM_AFTER + 900)
public class IdempotencyInterceptor {

    @Inject
    CurrentRequest currentRequest;

    @AroundInvoke
    public Object markStarted(InvocationContext invocation) throws Exception {
        Execution execution = currentExecution();
        if (execution == null || execution.started()) {
            return invocation.proceed();
        }
        execution.markStarted();
        if (isAsynchronous(invocation.getMethod())) {
            currentRequest.markAsynchronous();
        }
        try {
            return invocation.proceed();
        } catch (Exception | Error e) {
            if (!mapped(e)) {
                execution.release("the method threw " + e.getClass().getName() + ", which no ExceptionMapper handles");
            }
            throw e;
        }
    }

    private Execution currentExecution() {
        try {
            return currentRequest.execution();
        } catch (ContextNotActiveException e) {
            return null; // not a request thread: not ours to guard
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private boolean mapped(Throwable e) {
        if (e instanceof WebApplicationException) {
            return true; // the runtime turns it into its response, and the response filter decides
        }
        var providers = currentRequest.providers();
        if (providers == null) {
            return true; // cannot tell: leave it to the response filter or the end of the request
        }
        return e instanceof Exception && providers.getExceptionMapper((Class) e.getClass()) != null;
    }

    private static boolean isAsynchronous(Method method) {
        if (CompletionStage.class.isAssignableFrom(method.getReturnType())) {
            return true;
        }
        for (Annotation[] parameter : method.getParameterAnnotations()) {
            for (Annotation annotation : parameter) {
                if (annotation.annotationType() == Suspended.class) {
                    return true;
                }
            }
        }
        return false;
    }
}
