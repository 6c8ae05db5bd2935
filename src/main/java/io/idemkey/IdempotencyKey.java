package io.idemkey;

import jakarta.enterprise.util.Nonbinding;
import jakarta.interceptor.InterceptorBinding;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Makes a JAX-RS resource method safe to retry: it runs at most once per {@code Idempotency-Key}
 * request header, and every retry with the same key (on any server instance sharing the store)
 * receives the first execution's response again, marked {@code Idempotent-Replayed: true}.
 *
 * <p>Put it on a resource method, or on a resource class to guard every method of the class whose
 * HTTP method is guarded ({@code POST} and {@code PATCH} unless {@code idempotency.methods} says
 * otherwise). A method-level annotation wins over the class-level one.
 *
 * <p>Every member can be overridden with MicroProfile Config, most specific first:
 * <pre>
 * com.acme.PaymentResource/pay/IdempotencyKey/lockTtlSeconds=60
 * com.acme.PaymentResource/IdempotencyKey/lockTtlSeconds=60
 * IdempotencyKey/lockTtlSeconds=60
 * </pre>
 * Values are validated when the application is deployed; an invalid value fails the deployment with
 * a message naming the property.
 *
 * <p>It is a CDI interceptor binding (the interceptor tells Idemkey that the method actually
 * started) and drives JAX-RS filters registered for each annotated method. All members are
 * {@link Nonbinding}.
 */
@Inherited
@Documented
@InterceptorBinding
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.METHOD, ElementType.TYPE})
public @interface IdempotencyKey {

    /**
     * How long, in hours, a completed request is replayed to retries with the same key.
     * Valid range 1 to 8760 (one year); must be longer than {@link #lockTtlSeconds()}.
     *
     * @return hours, 1 to 8760
     */
    @Nonbinding
    int ttlHours() default 24;

    /**
     * How long, in seconds, an in-progress record survives without its owner. This is crash
     * detection, not a cap on processing time: while the method runs, its lease is renewed every
     * {@code lockTtlSeconds / 3}, so a slow method is never run twice, and the key of a server that
     * died mid-request frees itself after this many seconds. Valid range 1 to 86400.
     *
     * @return seconds, 1 to 86400
     */
    @Nonbinding
    int lockTtlSeconds() default 30;

    /**
     * Whether a request without the header is refused with {@code 400}. When {@code false}, such a
     * request runs unprotected.
     *
     * @return whether the header is required
     */
    @Nonbinding
    boolean required() default true;

    /**
     * JSON member names ignored by the request fingerprint: removed at every depth, inside arrays
     * too, compared case-insensitively. Use it for fields that legitimately change between retries,
     * such as {@code clientTimestamp} or {@code requestNonce}.
     *
     * @return member names
     */
    @Nonbinding
    String[] excludeFields() default {};

    /**
     * What happens when the store cannot be reached. {@link FailureMode#DEFAULT} follows
     * {@code idempotency.failure-mode} (fail closed unless configured otherwise).
     *
     * @return the failure mode
     */
    @Nonbinding
    FailureMode failureMode() default FailureMode.DEFAULT;

    /**
     * How long, in seconds, a retry that meets a still-running first request waits for it to finish
     * (and is then replayed) before being answered {@code 409 Conflict}. {@code 0}, the default,
     * answers {@code 409} at once. Valid range 0 to 60.
     *
     * @return seconds, 0 to 60
     */
    @Nonbinding
    int inFlightWaitSeconds() default 0;
}
