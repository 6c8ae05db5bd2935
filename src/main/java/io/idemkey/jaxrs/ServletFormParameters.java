package io.idemkey.jaxrs;

import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.core.MediaType;

import java.io.ByteArrayInputStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Hands a form the request filter has read to RESTEasy's {@code @FormParam}s, where RESTEasy runs on
 * a servlet container (Open Liberty, WildFly).
 *
 * <p>There, {@code @FormParam} (on the method, on the resource or in a {@code @BeanParam}) is filled
 * from the servlet request's parameters, which the container parses from its input stream: once the
 * filter has read that stream, they are empty, and the copy the filter restores reaches only the
 * entity providers. Older RESTEasy versions (Open Liberty's) then hand the method null fields; newer
 * ones parse the restored stream themselves. This makes every version do so: it has RESTEasy's
 * request parse its form parameters from the restored copy, with RESTEasy's own parser and charset,
 * before the method's parameters are injected, then restores the entity once more.
 *
 * <p>Only for methods that read {@code @FormParam}s ({@link FormParameterUse}): once its form
 * parameters are parsed, RESTEasy gives a form entity ({@code MultivaluedMap}, {@code Form}) a body
 * rebuilt from them rather than the entity stream, and that rebuilt body loses the names of repeated
 * fields. A method that reads its form as an entity keeps the entity stream.
 *
 * <p>RESTEasy's types are not visible to applications on every server (Open Liberty keeps them to
 * itself), so they are reached by reflection: the request context's public {@code getHttpRequest()}
 * and, on RESTEasy's servlet request ({@value #SERVLET_REQUEST}), its public
 * {@code getPutFormParameters()} and {@code getPutDecodedFormParameters()}, which parse the current
 * entity stream whatever the HTTP method. They are looked up once per runtime class; on any other
 * runtime (Jersey reads {@code @FormParam} from the restored entity) this does nothing. Should a
 * RESTEasy version lack them, or refuse the call, this steps aside with one warning.
 *
 * <p>One per application, held by its {@link IdempotencyFeature}: the server's classes are keys of
 * its caches, and nothing of the server holds anything of the application's. Thread-safe.
 */
final class ServletFormParameters {

    private static final Logger LOG = Logger.getLogger(ServletFormParameters.class.getName());

    /** RESTEasy's request on a servlet container, whose form parameters come from the servlet request. */
    static final String SERVLET_REQUEST = "org.jboss.resteasy.plugins.server.servlet.HttpServletInputMessage";

    /** The request context's {@code getHttpRequest()}, by the context's class; empty where there is none. */
    private final Map<Class<?>, Optional<Method>> httpRequests = new ConcurrentHashMap<>();
    /** RESTEasy's parsing methods, by the class of its request; empty where it is no servlet request. */
    private final Map<Class<?>, Optional<Parsers>> parsers = new ConcurrentHashMap<>();
    private final AtomicBoolean steppedAside = new AtomicBoolean();

    /**
     * After the entity was read and its stream replaced by a copy of these bytes: if it is a form
     * and the runtime is RESTEasy on a servlet container, has RESTEasy parse the form parameters
     * from it, then replaces the stream with a fresh copy.
     */
    void restored(ContainerRequestContext request, byte[] entity) {
        if (entity.length == 0 || steppedAside.get() || !isForm(request.getMediaType())) {
            return;
        }
        Optional<Method> httpRequest = httpRequests.computeIfAbsent(request.getClass(),
                type -> publicMethod(type, "getHttpRequest"));
        if (httpRequest.isEmpty()) {
            return;
        }
        try {
            Object resteasyRequest = httpRequest.get().invoke(request);
            Optional<Parsers> found = resteasyRequest == null ? Optional.empty()
                    : parsers.computeIfAbsent(resteasyRequest.getClass(), this::parsers);
            if (found.isEmpty()) {
                return;
            }
            found.get().encoded.invoke(resteasyRequest); // reads the restored copy: RESTEasy's parser and charset
            found.get().decoded.invoke(resteasyRequest); // decodes them, kept for @FormParam
        } catch (InvocationTargetException malformed) {
            // this body only (a broken percent-escape): RESTEasy meets it again when it reads the form itself
            LOG.log(Level.FINE, "RESTEasy could not parse a guarded request's form", malformed.getCause());
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            stepAside("its request could not be reached", e);
        } finally {
            request.setEntityStream(new ByteArrayInputStream(entity));
        }
    }

    private Optional<Parsers> parsers(Class<?> request) {
        if (!isServletRequest(request)) {
            return Optional.empty();
        }
        Optional<Method> encoded = publicMethod(request, "getPutFormParameters");
        Optional<Method> decoded = publicMethod(request, "getPutDecodedFormParameters");
        if (encoded.isEmpty() || decoded.isEmpty()) {
            stepAside(request.getName() + " has no getPutFormParameters() or getPutDecodedFormParameters()", null);
            return Optional.empty();
        }
        return Optional.of(new Parsers(encoded.get(), decoded.get()));
    }

    private static boolean isForm(MediaType type) {
        return type != null && "application".equalsIgnoreCase(type.getType())
                && "x-www-form-urlencoded".equalsIgnoreCase(type.getSubtype());
    }

    private static boolean isServletRequest(Class<?> type) {
        for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            if (c.getName().equals(SERVLET_REQUEST)) {
                return true;
            }
        }
        return false;
    }

    private static Optional<Method> publicMethod(Class<?> type, String name) {
        try {
            return Optional.of(type.getMethod(name));
        } catch (NoSuchMethodException | SecurityException | LinkageError e) {
            return Optional.empty();
        }
    }

    private void stepAside(String why, Throwable cause) {
        if (steppedAside.compareAndSet(false, true)) {
            LOG.log(Level.WARNING, "Idemkey cannot hand form parameters to RESTEasy (" + why + "): a guarded"
                    + " resource method that reads a form-encoded body with @FormParam may receive null fields;"
                    + " read the form as a MultivaluedMap or Form entity instead", cause);
        }
    }

    private record Parsers(Method encoded, Method decoded) {
    }
}
