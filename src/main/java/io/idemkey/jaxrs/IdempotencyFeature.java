package io.idemkey.jaxrs;

import io.idemkey.resource.ResourceMethods;
import io.idemkey.request.Problems;
import io.idemkey.request.ResultRenderer;
import io.idemkey.request.ResponseRecorder;
import io.idemkey.cdi.IdempotencyRuntime;
import io.idemkey.config.PolicyResolver;
import io.idemkey.core.IdempotencyPolicy;
import jakarta.enterprise.inject.spi.CDI;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.container.DynamicFeature;
import jakarta.ws.rs.container.ResourceInfo;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.FeatureContext;
import jakarta.ws.rs.ext.Provider;
import jakarta.ws.rs.ext.Providers;

import java.lang.reflect.Method;
import java.util.Optional;

/**
 * Binds Idemkey's filters and writer interceptor to every resource method guarded by
 * {@code @IdempotencyKey} (on the method or its class), each with the method's policy resolved once,
 * here, at deployment. Discovered like any {@code @Provider}; nothing to register by hand.
 *
 * <p>The filters themselves do not carry the annotation: a provider that did would become an
 * intercepted CDI bean.
 */
@Provider
public class IdempotencyFeature implements DynamicFeature {

    /** A proxy to the current request's providers (to tell mapped exceptions from unmapped ones). */
    @Context
    Providers providers;

    /** Form parameters handed to the runtime after the request filter read the entity: one for the application. */
    private final ServletFormParameters formParameters = new ServletFormParameters();

    /** The standard reason phrase on the status line of Idemkey's own answers: one for the application. */
    private final ServerReasonPhrase reasonPhrase = new ServerReasonPhrase();

    /**
     * Idemkey's request filter runs after the application's own filters (authentication ones included,
     * which default to USER), so that the caller is known and a request they refuse takes no key.
     */
    static final int REQUEST_FILTER_PRIORITY = Priorities.USER + 500;
    /** Response filters run in reverse priority order: the lowest runs last and sees the final status. */
    static final int RESPONSE_FILTER_PRIORITY = 1;
    /** Writer interceptors run in priority order: the highest is innermost, next to the entity writer. */
    static final int WRITER_INTERCEPTOR_PRIORITY = 100_000;

    @Override
    public void configure(ResourceInfo resource, FeatureContext context) {
        Class<?> type = resource.getResourceClass();
        Method method = resource.getResourceMethod();
        if (type == null || method == null || PolicyResolver.annotation(type, method).isEmpty()) {
            return;
        }
        IdempotencyRuntime runtime = CDI.current().select(IdempotencyRuntime.class).get();
        Optional<IdempotencyPolicy> policy = runtime.policy(type, method);
        if (policy.isEmpty()) {
            return;
        }
        runtime.bound(type, method, policy.get());
        Problems problems = new Problems();
        ResponseRecorder recorder = new ResponseRecorder(runtime.settings());
        String endpoint = ResourceMethods.endpoint(type, method);
        context.register(new IdempotencyRequestFilter(runtime, policy.get(), method, endpoint, problems, providers,
                        FormParameterUse.readsFormParameters(type, method) ? formParameters : null,
                        new ResultRenderer(recorder, providers, type, method, endpoint)),
                REQUEST_FILTER_PRIORITY);
        context.register(new IdempotencyResponseFilter(recorder, runtime.currentRequest(), reasonPhrase), RESPONSE_FILTER_PRIORITY);
        context.register(new IdempotencyWriterInterceptor(recorder, reasonPhrase), WRITER_INTERCEPTOR_PRIORITY);
    }
}
