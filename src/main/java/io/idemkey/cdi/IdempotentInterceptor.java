package io.idemkey.cdi;

import io.idemkey.Idempotent;
import jakarta.annotation.Priority;
import jakarta.inject.Inject;
import jakarta.interceptor.AroundInvoke;
import jakarta.interceptor.Interceptor;
import jakarta.interceptor.InvocationContext;

/**
 * Runs an {@link Idempotent} method at most once per key. Innermost
 * ({@code PLATFORM_AFTER + 900}), inside {@code @Transactional}'s interceptor: the outcome is
 * recorded with the method's transaction ({@link TransactionalStoreCalls}).
 */
@Idempotent
@Interceptor
@Priority(Interceptor.Priority.PLATFORM_AFTER + 900)
public class IdempotentInterceptor {

    @Inject
    IdempotencyRuntime runtime;

    @AroundInvoke
    public Object guardCall(InvocationContext invocation) throws Exception {
        IdempotentMethod method = runtime.idempotentMethod(invocation.getMethod());
        Object[] arguments = invocation.getParameters();
        return runtime.calls().call(method.policy(), arguments[method.keyIndex()], method.resultType(),
                method.otherArguments(arguments), runtime.callStoreCalls(), invocation::proceed);
    }
}
