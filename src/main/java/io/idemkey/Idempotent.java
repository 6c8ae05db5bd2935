package io.idemkey;

import jakarta.enterprise.util.Nonbinding;
import jakarta.interceptor.InterceptorBinding;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Makes a method of a CDI bean idempotent: it runs at most once per key, and every later call with
 * the same key (on any server instance sharing the store) gets the first call's outcome back without
 * running. For what HTTP is not: message listeners, scheduled jobs, services with several entry
 * points. The key is the argument of the parameter marked {@link Key}:
 * <pre>
 * &#64;Idempotent(scope = "payments", recordedExceptions = InsufficientFunds.class)
 * public Receipt apply(&#64;Idempotent.Key String paymentId, Payment payment) { ... }
 * </pre>
 * <ul>
 * <li>The first call runs; its return value is recorded (JSON-B, generic types included; {@code void}
 *     allowed). A later call returns an equal value, read back with the method's generic return type.</li>
 * <li>A call while the first still runs throws {@link IdempotencyException.InProgress} (after waiting
 *     up to {@link #inFlightWaitSeconds()} for the first to finish).</li>
 * <li>An exception releases the key (a later call runs again), unless its class is listed in
 *     {@link #recordedExceptions()}: then it is the recorded outcome, and later calls throw an exception
 *     of the same class with the same message.</li>
 * <li>The other arguments (JSON-B, {@link #excludeFields()} removed) are fingerprinted: a key reused
 *     with different arguments throws {@link IdempotencyException.KeyReused}.</li>
 * <li>Inside a JTA transaction, the outcome is recorded only if the transaction commits; with the JDBC
 *     store it is recorded in that transaction, with the method's effects.</li>
 * </ul>
 *
 * <p>Members can be overridden with MicroProfile Config, most specific first, as for
 * {@link IdempotencyKey}: {@code com.acme.Payments/apply/Idempotent/lockTtlSeconds=60},
 * {@code com.acme.Payments/Idempotent/lockTtlSeconds}, {@code Idempotent/lockTtlSeconds}. Placements
 * that cannot be honoured (no {@link Key} parameter, a private, static or final method, an
 * asynchronous result) fail the deployment, naming the method. Where no annotation can be put, use
 * {@link Idempotency}.
 */
@Documented
@InterceptorBinding
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.METHOD, ElementType.TYPE}) // TYPE for the interceptor only: on a bean class it fails the deployment
public @interface Idempotent {

    /**
     * Whose keys these are: calls share records only within one scope (a tenant, a consumer group, an
     * operation several methods perform). Empty, the default, is the method itself
     * ({@code <class>.<method>}), so two methods never answer each other's keys; but then renaming
     * the method or moving its class leaves its records behind (the deployment warns of each
     * method without a scope): pin the scope where records must outlive a release.
     *
     * @return the scope's name
     */
    @Nonbinding
    String scope() default "";

    /**
     * How long, in hours, a completed call's outcome is returned to later calls. 1 to 8760.
     *
     * @return hours
     */
    @Nonbinding
    int ttlHours() default 24;

    /**
     * How long, in seconds, an in-progress record survives without its owner (renewed every third of
     * it while the method runs): a call whose server died runs again this long after. 1 to 86400.
     *
     * @return seconds
     */
    @Nonbinding
    int lockTtlSeconds() default 30;

    /**
     * JSON member names left out of the arguments' fingerprint, at every depth.
     *
     * @return member names
     */
    @Nonbinding
    String[] excludeFields() default {};

    /**
     * Exceptions that are outcomes, not failures (a declined payment): recorded and re-thrown, same
     * class and message, to later calls. Subclasses count. Any other exception releases the key.
     *
     * @return exception classes
     */
    @Nonbinding
    Class<? extends Exception>[] recordedExceptions() default {};

    /**
     * When the store cannot be reached: {@link FailureMode#DEFAULT} follows
     * {@code idempotency.failure-mode}. Failing closed throws {@link IdempotencyException.Unavailable};
     * failing open runs the method unprotected.
     *
     * @return the failure mode
     */
    @Nonbinding
    FailureMode failureMode() default FailureMode.DEFAULT;

    /**
     * How long, in seconds, a call that meets a still-running first call waits for its outcome before
     * {@link IdempotencyException.InProgress} is thrown. 0 to 60; 0, the default, throws at once.
     *
     * @return seconds
     */
    @Nonbinding
    int inFlightWaitSeconds() default 0;

    /**
     * Marks the parameter whose argument is the idempotency key (a message id, a payment id): its
     * {@code toString()}, 1 to {@code idempotency.max-key-length} characters, no control characters.
     * Exactly one parameter of an {@link Idempotent} method carries it.
     */
    @Documented
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.PARAMETER)
    @interface Key {
    }
}
