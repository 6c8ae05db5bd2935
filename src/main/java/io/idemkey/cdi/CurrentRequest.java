package io.idemkey.cdi;

import io.idemkey.IdempotencyContext;
import io.idemkey.core.Execution;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.ContextNotActiveException;
import jakarta.inject.Inject;
import jakarta.servlet.http.HttpServletRequest;

import java.util.Optional;

/**
 * {@link IdempotencyContext} for the application: the guarded request of the current HTTP request,
 * read from the request it travels with (see {@link GuardedRequest}).
 */
@ApplicationScoped
public class CurrentRequest implements IdempotencyContext {

    @Inject
    HttpServletRequest request;

    /** The current request's guarded request, or null (none, or not on a request thread). */
    public GuardedRequest guarded() {
        try {
            return (GuardedRequest) request.getAttribute(GuardedRequest.ATTRIBUTE);
        } catch (ContextNotActiveException | IllegalStateException notOnARequestThread) {
            return null;
        }
    }

    private Execution execution() {
        GuardedRequest guarded = guarded();
        return guarded == null ? null : guarded.execution();
    }

    @Override
    public Optional<String> key() {
        return Optional.ofNullable(execution()).map(Execution::key);
    }

    @Override
    public void markRetryable() {
        Execution execution = execution();
        if (execution != null) {
            execution.markRetryable();
        }
    }
}
