package io.idemkey.request;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Whether MicroProfile Fault Tolerance may invoke a guarded method more than once in one request:
 * its {@code @Retry} on the method or its class. Its interceptor runs outside Idemkey's (priority
 * {@code PLATFORM_AFTER + 10}), so every attempt passes through Idemkey's interceptor, and each is
 * guarded as the first was. Found by the annotation's name: the Fault Tolerance API need not be there.
 */
final class FaultToleranceRetry {

    private static final String RETRY = "org.eclipse.microprofile.faulttolerance.Retry";
    private static final Map<Method, Boolean> DECLARED = new ConcurrentHashMap<>();

    private FaultToleranceRetry() {
    }

    /** Whether {@code method} (or its class) carries Fault Tolerance's {@code @Retry}. */
    static boolean declaredOn(Method method) {
        return method != null && DECLARED.computeIfAbsent(method,
                m -> carries(m.getAnnotations()) || carries(m.getDeclaringClass().getAnnotations()));
    }

    private static boolean carries(Annotation[] annotations) {
        for (Annotation annotation : annotations) {
            if (annotation.annotationType().getName().equals(RETRY)) {
                return true;
            }
        }
        return false;
    }
}
