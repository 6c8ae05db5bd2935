package io.idemkey.cdi;

import io.idemkey.request.CurrentRequest;
import io.idemkey.request.GuardedRequest;
import io.idemkey.IdempotencyKey;
import io.idemkey.client.RestClientRetries;
import io.idemkey.core.Execution;
import io.idemkey.core.StoredResponse;
import io.idemkey.request.Problems;
import io.idemkey.request.ResultRenderer;
import jakarta.annotation.Priority;
import jakarta.inject.Inject;
import jakarta.interceptor.AroundInvoke;
import jakarta.interceptor.Interceptor;
import jakarta.interceptor.InvocationContext;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.container.AsyncResponse;
import jakarta.ws.rs.container.CompletionCallback;
import jakarta.ws.rs.ext.ExceptionMapper;
import jakarta.ws.rs.ext.Providers;

import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

/**
 * Tells the guarded execution that the resource method really started: only then is its outcome
 * recorded (Stripe's rule). A request refused before this point (bean validation, an unreadable
 * entity) releases its key.
 *
 * <p>It runs innermost ({@code PLATFORM_AFTER + 900}, after bean validation's interceptor), right
 * before the method body. When the method fails with an exception that no {@link ExceptionMapper}
 * handles, no response filter will run, so the key is released here before the error reaches the
 * client. Asynchronous methods ({@link CompletionStage} results, {@link AsyncResponse} parameters)
 * get the same treatment when they complete.
 *
 * <p>The same annotation on a shared interface makes MicroProfile Rest Client calls of its methods
 * retry safely: calls on a client proxy go to {@link RestClientRetries}.
 */
@IdempotencyKey
@Interceptor
@Priority(Interceptor.Priority.PLATFORM_AFTER + 900)
public class IdempotencyInterceptor {

    private static final Problems PROBLEMS = new Problems();

    @Inject
    CurrentRequest currentRequest;

    @Inject
    IdempotencyRuntime runtime;

    @AroundInvoke
    public Object guardMethod(InvocationContext invocation) throws Exception {
        if (RestClientRetries.clientCall(invocation.getMethod(), invocation.getTarget())) {
            return RestClientRetries.retrySafely(invocation); // a shared interface's method, called on a Rest Client
        }
        GuardedRequest awaiting = currentRequest.awaiting();
        boolean firstAttempt = awaiting != null && !awaiting.execution().started() && awaiting.execution().isRunning();
        GuardedRequest guarded = firstAttempt ? awaiting : currentRequest.repeating(); // @Retry invokes the method again
        if (guarded == null || !isResourceMethod(invocation.getMethod(), guarded)) {
            return invocation.proceed();
        }
        GuardedRequest outer = currentRequest.methodStarts(guarded);
        Execution execution = guarded.execution();
        execution.markStarted();
        execution.workBegins();
        Providers providers = guarded.providers();
        try {
            guardAsyncResponse(invocation, guarded, providers);
            Object result;
            try {
                result = invocation.proceed();
            } catch (Exception | Error e) {
                try {
                    attemptFailed(guarded, e, providers);
                } catch (RuntimeException releaseFailed) {
                    e.addSuppressed(releaseFailed);
                }
                throw e;
            }
            execution.attemptSucceeded();
            if (result instanceof CompletionStage<?> stage) {
                guarded.markAsynchronous();
                stage.whenComplete((value, failure) -> {
                    releaseIfUnmapped(execution, failure, providers);
                    guarded.asynchronousAnswerEnded();
                });
            } else if (!guarded.asynchronous()) {
                recordInTransaction(guarded, result);
            }
            currentRequest.methodReturned(guarded);
            return result;
        } finally {
            execution.workEnded();
            currentRequest.methodEnded(outer);
        }
    }

    /**
     * Where the method ran in a JTA transaction: an outcome whose transaction rolls back is never
     * recorded as it was answered (its effects are gone), whatever the store; its key is released so
     * that a retry runs again. Where the store can also join the transaction (the JDBC store on the
     * application's DataSource), the response is recorded right now, inside it: the record commits
     * with the method's effects or not at all, so a crash after the commit cannot let a retry run
     * again. If the key's lease was lost meanwhile (the record expired, perhaps taken over by another
     * request), the transaction is rolled back and the client gets 409; if the store cannot be
     * reached, 503. As the transaction commits, after its persistence contexts flushed, the result
     * is rendered again, and the record takes that rendering if it differs (an id the database
     * generated, a version, a value an entity callback set); the response filters compare it with the
     * response the client receives ({@link io.idemkey.core.Execution#answered}).
     */
    private void recordInTransaction(GuardedRequest guarded, Object result) {
        Transactions transactions = runtime.transactions();
        if (!transactions.present()) {
            return;
        }
        Execution execution = guarded.execution();
        if (!transactions.active()) {
            execution.markRetryable(); // marked rollback-only: it will roll back, whatever the method answered
            return;
        }
        transactions.afterCompletion(execution::transactionEnded); // registered before anything is written
        if (!runtime.store().joinsTransactions() || !execution.recordable(ResultRenderer.status(result))) {
            return;
        }
        Optional<StoredResponse> response = guarded.render(result);
        if (response.isEmpty()) {
            return;
        }
        CompletionWithEffects.Outcome outcome = runtime.completionWithEffects().complete(execution, response.get());
        switch (outcome.result()) {
            case FAILED -> throw new WebApplicationException(outcome.failure(), PROBLEMS.problem(
                    Problems.Type.STORE_UNAVAILABLE, "The request's outcome could not be recorded with its effects, so"
                            + " they were undone. Retry with the same key.", runtime.settings().unavailableRetryAfter()));
            case LOST -> throw new WebApplicationException(PROBLEMS.problem(Problems.Type.KEY_TAKEN_OVER, "This request"
                    + " outlived its key's lease, so its effects were undone: another request with the same key may have"
                    + " run meanwhile. Retry with the same key to receive the outcome."));
            case JOINED -> transactions.beforeCompletion(() -> guarded.render(result).ifPresent(execution::renderedAtCommit));
            case NOT_JOINED -> {
            }
        }
    }

    /**
     * An attempt of the method failed. Unless another may follow (Fault Tolerance's {@code @Retry}),
     * an unmapped failure releases the key now. Where another may, the key is kept for it, and only
     * an answer a later attempt returns is recorded: not one made of the last attempt's exception,
     * mapped or not, nor a {@code @Fallback}'s (the end of the request releases the key then).
     */
    private void attemptFailed(GuardedRequest guarded, Throwable failure, Providers providers) {
        Execution execution = guarded.execution();
        if (!guarded.attemptsRepeat()) {
            releaseIfUnmapped(execution, failure, providers);
        } else if (execution.isRunning()) {
            execution.attemptFailed();
        }
    }

    /** Another bean of the request may carry the binding too (a class-level annotation): not the method. */
    private static boolean isResourceMethod(Method invoked, GuardedRequest guarded) {
        Method resourceMethod = guarded.resourceMethod();
        return resourceMethod == null || (invoked.getName().equals(resourceMethod.getName())
                && Arrays.equals(invoked.getParameterTypes(), resourceMethod.getParameterTypes()));
    }

    /**
     * No response filter runs after an unmapped exception: release now, before the error goes out,
     * and outside the method's transaction if one is active (a release written in a transaction that
     * is about to roll back would be undone).
     */
    private void releaseIfUnmapped(Execution execution, Throwable failure, Providers providers) {
        Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
        if (cause != null && execution.isRunning() && !mapped(cause, providers)) {
            runtime.transactions().outside(() -> {
                execution.release("the method failed with " + cause.getClass().getName() + ", which no ExceptionMapper handles");
                return true;
            });
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static boolean mapped(Throwable failure, Providers providers) {
        if (failure instanceof WebApplicationException) {
            return true; // the runtime turns it into its response, and the response filter decides
        }
        if (providers == null) {
            return true; // cannot tell: leave it to the response filter or the end of the request
        }
        try {
            return providers.getExceptionMapper((Class) failure.getClass()) != null;
        } catch (RuntimeException offRequestThread) {
            // RESTEasy's Providers answers only on the request thread; it maps every exception anyway
            // (its default mapper), so the response filter will see the failure.
            return true;
        }
    }

    /**
     * Hands the method an {@link AsyncResponse} that releases the key before an unmapped failure
     * goes out; the completion callback catches whatever still slips through (after the fact).
     */
    private void guardAsyncResponse(InvocationContext invocation, GuardedRequest guarded, Providers providers) {
        Execution execution = guarded.execution();
        Object[] parameters = invocation.getParameters();
        for (int i = 0; i < parameters.length; i++) {
            if (parameters[i] instanceof AsyncResponse response) {
                guarded.markAsynchronous();
                response.register((CompletionCallback) failure -> {
                    releaseIfUnmapped(execution, failure, providers);
                    guarded.asynchronousAnswerEnded();
                });
                parameters[i] = new GuardedAsyncResponse(response, failure -> releaseIfUnmapped(execution, failure, providers));
                invocation.setParameters(parameters);
                return;
            }
        }
    }
}
