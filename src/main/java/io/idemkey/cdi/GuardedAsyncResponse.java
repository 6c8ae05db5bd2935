package io.idemkey.cdi;

import jakarta.ws.rs.container.AsyncResponse;
import jakarta.ws.rs.container.TimeoutHandler;

import java.util.Collection;
import java.util.Date;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The {@link AsyncResponse} a guarded asynchronous method receives: it sees a failure the method
 * resumes with before the runtime does, so that an unmapped one releases the key before the error
 * reaches the client (no response filter runs for it). Everything else is delegated.
 */
final class GuardedAsyncResponse implements AsyncResponse {

    private final AsyncResponse delegate;
    private final Consumer<Throwable> beforeFailure;

    GuardedAsyncResponse(AsyncResponse delegate, Consumer<Throwable> beforeFailure) {
        this.delegate = delegate;
        this.beforeFailure = beforeFailure;
    }

    @Override
    public boolean resume(Object response) {
        if (response instanceof Throwable failure) {
            beforeFailure.accept(failure);
        }
        return delegate.resume(response);
    }

    @Override
    public boolean resume(Throwable response) {
        beforeFailure.accept(response);
        return delegate.resume(response);
    }

    @Override
    public boolean cancel() {
        return delegate.cancel();
    }

    @Override
    public boolean cancel(int retryAfter) {
        return delegate.cancel(retryAfter);
    }

    @Override
    public boolean cancel(Date retryAfter) {
        return delegate.cancel(retryAfter);
    }

    @Override
    public boolean isSuspended() {
        return delegate.isSuspended();
    }

    @Override
    public boolean isCancelled() {
        return delegate.isCancelled();
    }

    @Override
    public boolean isDone() {
        return delegate.isDone();
    }

    @Override
    public boolean setTimeout(long time, TimeUnit unit) {
        return delegate.setTimeout(time, unit);
    }

    @Override
    public void setTimeoutHandler(TimeoutHandler handler) {
        delegate.setTimeoutHandler(ignored -> handler.handleTimeout(this));
    }

    @Override
    public Collection<Class<?>> register(Class<?> callback) {
        return delegate.register(callback);
    }

    @Override
    public Map<Class<?>, Collection<Class<?>>> register(Class<?> callback, Class<?>... callbacks) {
        return delegate.register(callback, callbacks);
    }

    @Override
    public Collection<Class<?>> register(Object callback) {
        return delegate.register(callback);
    }

    @Override
    public Map<Class<?>, Collection<Class<?>>> register(Object callback, Object... callbacks) {
        return delegate.register(callback, callbacks);
    }
}
