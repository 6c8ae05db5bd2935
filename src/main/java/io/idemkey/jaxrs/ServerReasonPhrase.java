package io.idemkey.jaxrs;

import io.idemkey.request.ReasonPhrases;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.ext.InterceptorContext;

import java.lang.reflect.Field;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.util.Arrays;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Puts the standard reason phrase ({@link ReasonPhrases}) on the status line of Idemkey's own
 * answers, its problems and its replays, where the server would write a phrase of its own.
 *
 * <p>Servlet 6 has no way to set a phrase: a JAX-RS runtime on a servlet container hands on the
 * code only, and the server writes the phrase of its own table, {@code 422 CUSTOM} and
 * {@code 429 CUSTOM} on Payara Micro (Grizzly), {@code 422 Undefined} and {@code 429 Undefined} on
 * Open Liberty, {@code 422 Unprocessable Entity} on WildFly (Undertow). Each of them keeps a phrase
 * with its own response until the head is written, and forgets it when the status is set: this sets
 * it there after the runtime set the status and before the entity is written.
 * <ul>
 * <li>RESTEasy (Open Liberty, WildFly) sets the status before the writer interceptors run:
 *     {@link IdempotencyWriterInterceptor} has the phrase set ({@link #writing}) before the entity.
 *     The servlet response is RESTEasy's context data, {@code ResteasyContext.getContextData}.
 * <li>Jersey (Payara Micro) sets it when the entity stream commits, in its response writer: the
 *     response filter ({@link #answering}) gives the request a writer that delegates to Jersey's and
 *     sets the phrase once Jersey's {@code writeResponseStatusAndHeaders} has set the status. The
 *     servlet response is that writer's field {@value #JERSEY_WRITER_RESPONSE}.
 * </ul>
 * The phrase goes to the server's response behind the servlet response (unwrapped from any
 * {@code ServletResponseWrapper}): Undertow's exchange ({@code getExchange().setReasonPhrase}),
 * Open Liberty's {@code setReason}, or Grizzly's response packet behind Catalina's facade
 * ({@code response.getCoyoteResponse().getResponse().setReasonPhrase}). On RESTEasy an answer
 * without an entity keeps the server's phrase. HTTP/2 has no phrase at all.
 *
 * <p>None of these types is visible to applications on every server (the servlet API is not, on an
 * Open Liberty without its servlet feature), so they are reached by reflection, looked up once per
 * runtime class, the first time an answer meets it. A runtime or server without them keeps its own
 * phrase, with one FINE log; should setting the phrase fail, this steps aside for good (one FINE
 * log) and the request goes on: nothing here throws into a request.
 *
 * <p>One per application, held by its {@link IdempotencyFeature}: the server's classes are keys of
 * its caches; of the server's objects only a Jersey request under way holds anything of the
 * application's (its writer's handler), until it ends. Thread-safe.
 */
final class ServerReasonPhrase {

    private static final Logger LOG = Logger.getLogger(ServerReasonPhrase.class.getName());

    private static final String RESTEASY_CONTEXT = "org.jboss.resteasy.core.ResteasyContext";
    private static final String SERVLET_RESPONSE = "jakarta.servlet.http.HttpServletResponse";
    private static final String SERVLET_RESPONSE_WRAPPER = "jakarta.servlet.ServletResponseWrapper";
    /** Jersey's servlet response writer keeps the servlet response in this field. */
    static final String JERSEY_WRITER_RESPONSE = "response";
    private static final String JERSEY_WRITE_STATUS = "writeResponseStatusAndHeaders";

    /** Jersey: the request's {@code getResponseWriter()} and {@code setWriter(..)}, by request class. */
    private final Map<Class<?>, Optional<WriterSwap>> writerSwaps = new ConcurrentHashMap<>();
    /** Jersey: the field of a response writer that holds the servlet response, by writer class. */
    private final Map<Class<?>, Optional<Field>> writerResponses = new ConcurrentHashMap<>();
    /** RESTEasy: how to reach the servlet response under way, by the class of an interceptor context. */
    private final Map<Class<?>, Optional<ContextData>> contextData = new ConcurrentHashMap<>();
    /** How a server's response takes a phrase, by its class. */
    private final Map<Class<?>, Optional<Setter>> setters = new ConcurrentHashMap<>();
    /** A servlet response wrapper's {@code getResponse()}, by wrapper class; empty for a server's own response. */
    private final Map<Class<?>, Optional<Method>> unwrappers = new ConcurrentHashMap<>();
    private final AtomicBoolean steppedAside = new AtomicBoolean();

    /**
     * From the response filter, for an answer of Idemkey's own with this (final) status: keeps its
     * standard phrase for the writer interceptor and, on Jersey, has it set once the status is.
     */
    void answering(ContainerRequestContext request, int status) {
        String phrase = ReasonPhrases.of(status);
        if (phrase == null || steppedAside.get()) {
            return;
        }
        request.setProperty(RequestProperties.REASON_PHRASE, phrase);
        replaceWriter(request, phrase);
    }

    /** On Jersey: gives the request a response writer that sets the phrase once Jersey's has set the status. */
    void replaceWriter(Object request, String phrase) {
        if (steppedAside.get()) {
            return;
        }
        try {
            Optional<WriterSwap> swap = writerSwaps.computeIfAbsent(request.getClass(), ServerReasonPhrase::writerSwap);
            if (swap.isPresent()) {
                swapWriter(request, swap.get(), phrase);
            }
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            stepAside(e);
        }
    }

    /** From the writer interceptor, before the entity: on RESTEasy, the status is set by now. */
    void writing(InterceptorContext context) {
        if (!(context.getProperty(RequestProperties.REASON_PHRASE) instanceof String phrase) || steppedAside.get()) {
            return;
        }
        try {
            Optional<ContextData> data = contextData.computeIfAbsent(context.getClass(), ServerReasonPhrase::contextData);
            if (data.isPresent()) {
                Object servletResponse = data.get().get.invoke(null, data.get().servletResponse);
                if (servletResponse != null) {
                    set(servletResponse, phrase);
                }
            }
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            stepAside(e);
        }
    }

    private void swapWriter(Object request, WriterSwap swap, String phrase)
            throws ReflectiveOperationException {
        Object writer = swap.get.invoke(request);
        if (writer == null || Proxy.isProxyClass(writer.getClass())) {
            return;
        }
        Optional<Field> field = writerResponses.computeIfAbsent(writer.getClass(), ServerReasonPhrase::writerResponse);
        if (field.isEmpty()) {
            return;
        }
        Object servletResponse = field.get().get(writer);
        if (servletResponse == null || setter(unwrap(servletResponse)).isEmpty()) {
            return;
        }
        Class<?> type = swap.set.getParameterTypes()[0];
        Object replacement = Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[]{type},
                new PhraseAfterStatus(writer, servletResponse, phrase));
        swap.set.invoke(request, replacement);
    }

    /** Jersey's response writer, and the phrase set on its response right after it set the status. */
    private final class PhraseAfterStatus implements InvocationHandler {

        private final Object writer;
        private final Object servletResponse;
        private final String phrase;

        PhraseAfterStatus(Object writer, Object servletResponse, String phrase) {
            this.writer = writer;
            this.servletResponse = servletResponse;
            this.phrase = phrase;
        }

        @Override
        public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
            Object result;
            try {
                result = method.invoke(writer, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
            if (method.getName().equals(JERSEY_WRITE_STATUS) && !steppedAside.get()) {
                try {
                    set(servletResponse, phrase);
                } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
                    stepAside(e);
                }
            }
            return result;
        }
    }

    private void set(Object servletResponse, String phrase) throws ReflectiveOperationException {
        Object response = unwrap(servletResponse);
        Optional<Setter> setter = setter(response);
        if (setter.isPresent()) {
            setter.get().set(response, phrase);
        }
    }

    private Optional<Setter> setter(Object response) {
        return setters.computeIfAbsent(response.getClass(), ServerReasonPhrase::setter);
    }

    /** The server's own response behind any servlet response wrappers. */
    private Object unwrap(Object servletResponse) throws ReflectiveOperationException {
        Object response = servletResponse;
        for (int depth = 0; depth < 32; depth++) {
            Optional<Method> getResponse = unwrappers.computeIfAbsent(response.getClass(), ServerReasonPhrase::unwrapper);
            if (getResponse.isEmpty()) {
                return response;
            }
            Object inner = getResponse.get().invoke(response);
            if (inner == null || inner == response) {
                return response;
            }
            response = inner;
        }
        return response;
    }

    private static Optional<WriterSwap> writerSwap(Class<?> request) {
        Optional<Method> get = publicMethod(request, "getResponseWriter");
        if (get.isEmpty()) {
            return Optional.empty(); // not Jersey
        }
        Class<?> writer = get.get().getReturnType();
        Optional<Method> set = publicMethod(request, "setWriter", writer);
        if (!writer.isInterface() || set.isEmpty()) {
            unavailable(request.getName() + " has no setWriter(" + writer.getName() + ")");
            return Optional.empty();
        }
        return Optional.of(new WriterSwap(get.get(), set.get()));
    }

    private static Optional<Field> writerResponse(Class<?> writer) {
        Optional<Field> field = field(writer, JERSEY_WRITER_RESPONSE);
        if (field.isEmpty() || !isServletResponse(field.get().getType())) {
            unavailable(writer.getName() + " holds no servlet response");
            return Optional.empty();
        }
        return field;
    }

    private static Optional<ContextData> contextData(Class<?> interceptorContext) {
        ClassLoader loader = interceptorContext.getClassLoader();
        if (loader == null) {
            return Optional.empty();
        }
        Class<?> context;
        try {
            context = Class.forName(RESTEASY_CONTEXT, false, loader);
        } catch (ClassNotFoundException | LinkageError notResteasy) {
            return Optional.empty();
        }
        try {
            Class<?> servletResponse = Class.forName(SERVLET_RESPONSE, false, loader);
            return Optional.of(new ContextData(context.getMethod("getContextData", Class.class), servletResponse));
        } catch (ReflectiveOperationException | LinkageError | SecurityException e) {
            unavailable("RESTEasy's context data holds no servlet response (" + e + ")");
            return Optional.empty();
        }
    }

    private static Optional<Method> unwrapper(Class<?> response) {
        for (Class<?> c = response; c != null; c = c.getSuperclass()) {
            if (c.getName().equals(SERVLET_RESPONSE_WRAPPER)) {
                return publicMethod(c, "getResponse");
            }
        }
        return Optional.empty();
    }

    /**
     * How this server response takes a phrase: Undertow's {@code getExchange().setReasonPhrase(String)},
     * Open Liberty's {@code setReason(String)}, Catalina's facade's {@code response} field and its
     * {@code getCoyoteResponse().getResponse().setReasonPhrase(String)} (Grizzly's packet).
     */
    private static Optional<Setter> setter(Class<?> response) {
        Optional<Method> exchange = publicMethod(response, "getExchange");
        if (exchange.isPresent()) {
            Optional<Method> setReasonPhrase = publicMethod(exchange.get().getReturnType(), "setReasonPhrase", String.class);
            if (setReasonPhrase.isPresent()) {
                return Optional.of(new Setter(new Member[]{Member.of(exchange.get())}, setReasonPhrase.get()));
            }
        }
        Optional<Method> setReason = publicMethod(response, "setReason", String.class);
        if (setReason.isPresent()) {
            return Optional.of(new Setter(new Member[0], setReason.get()));
        }
        Optional<Setter> catalina = catalina(response);
        if (catalina.isPresent()) {
            return catalina;
        }
        unavailable(response.getName() + " takes no reason phrase Idemkey knows how to set");
        return Optional.empty();
    }

    private static Optional<Setter> catalina(Class<?> response) {
        Optional<Method> coyote = publicMethod(response, "getCoyoteResponse");
        Member[] path;
        if (coyote.isPresent()) {
            path = new Member[]{Member.of(coyote.get())};
        } else {
            Optional<Field> inner = field(response, "response");
            if (inner.isEmpty()) {
                return Optional.empty();
            }
            coyote = publicMethod(inner.get().getType(), "getCoyoteResponse");
            if (coyote.isEmpty()) {
                return Optional.empty();
            }
            path = new Member[]{Member.of(inner.get()), Member.of(coyote.get())};
        }
        Optional<Method> packet = publicMethod(coyote.get().getReturnType(), "getResponse");
        if (packet.isEmpty()) {
            return Optional.empty();
        }
        Optional<Method> setReasonPhrase = publicMethod(packet.get().getReturnType(), "setReasonPhrase", String.class);
        if (setReasonPhrase.isEmpty()) {
            return Optional.empty();
        }
        Member[] full = Arrays.copyOf(path, path.length + 1);
        full[path.length] = Member.of(packet.get());
        return Optional.of(new Setter(full, setReasonPhrase.get()));
    }

    private static boolean isServletResponse(Class<?> type) {
        return type.getName().equals(SERVLET_RESPONSE) || type.getName().equals("jakarta.servlet.ServletResponse");
    }

    private static Optional<Method> publicMethod(Class<?> type, String name, Class<?>... parameters) {
        try {
            Method method = type.getMethod(name, parameters);
            return Modifier.isPublic(method.getDeclaringClass().getModifiers()) && !Modifier.isStatic(method.getModifiers())
                    ? Optional.of(method) : Optional.empty();
        } catch (NoSuchMethodException | SecurityException | LinkageError e) {
            return Optional.empty();
        }
    }

    /** A field declared by this class or one of its superclasses, made accessible; empty where it cannot be. */
    private static Optional<Field> field(Class<?> type, String name) {
        for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            try {
                Field field = c.getDeclaredField(name);
                if (Modifier.isStatic(field.getModifiers())) {
                    return Optional.empty();
                }
                field.setAccessible(true);
                return Optional.of(field);
            } catch (NoSuchFieldException next) {
                // look in the superclass
            } catch (RuntimeException | LinkageError e) { // InaccessibleObjectException, SecurityException
                return Optional.empty();
            }
        }
        return Optional.empty();
    }

    private static void unavailable(String why) {
        LOG.log(Level.FINE, "Idemkey cannot set the reason phrase of its answers ({0}): the server writes its own", why);
    }

    private void stepAside(Throwable cause) {
        if (steppedAside.compareAndSet(false, true)) {
            LOG.log(Level.INFO, "Idemkey stops setting the reason phrase of its answers: the server writes its own", cause);
        }
    }

    private record WriterSwap(Method get, Method set) {
    }

    private record ContextData(Method get, Class<?> servletResponse) {
    }

    /** A step from one object to the next: a getter or a field. */
    private record Member(Method getter, Field field) {

        static Member of(Method getter) {
            return new Member(getter, null);
        }

        static Member of(Field field) {
            return new Member(null, field);
        }

        Object from(Object target) throws ReflectiveOperationException {
            return getter != null ? getter.invoke(target) : field.get(target);
        }
    }

    /** From a server's response through these steps to the object whose setter takes the phrase. */
    private record Setter(Member[] path, Method setter) {

        void set(Object response, String phrase) throws ReflectiveOperationException {
            Object target = response;
            for (Member step : path) {
                target = step.from(target);
                if (target == null) {
                    return;
                }
            }
            setter.invoke(target, phrase);
        }
    }
}
