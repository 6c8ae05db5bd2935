package io.idemkey.request;

import io.idemkey.resource.ResourceMethods;
import io.idemkey.core.StoredResponse;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.GenericEntity;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.MultivaluedHashMap;
import jakarta.ws.rs.core.MultivaluedMap;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.StreamingOutput;
import jakarta.ws.rs.ext.MessageBodyWriter;
import jakarta.ws.rs.ext.Providers;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.Reader;
import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.lang.reflect.Type;
import java.net.URI;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Logger;

/**
 * A resource method's result rendered as the response the JAX-RS runtime is about to write for it:
 * the status, the headers the method set, and the entity's bytes from the application's own
 * {@link MessageBodyWriter}. This is the record written inside the method's transaction, before any
 * response exists ({@code IdempotencyInterceptor}); response filters and writer interceptors that
 * change the response later are not part of it.
 *
 * <p>It renders only what it can render exactly and without side effects: a media type the method
 * fixed (the {@link Response}'s, or the one {@link Produces} type the request accepts), and an entity
 * that can be written twice (not a stream). Otherwise it answers empty and the record is written
 * after the response, as without a transaction (logged once per endpoint).
 */
public final class ResultRenderer {

    private static final Logger LOG = Logger.getLogger(ResultRenderer.class.getName());

    private final ResponseRecorder recorder;
    private final Providers providers;
    private final Method method;
    private final String endpoint;
    private final List<MediaType> produces;
    private final Set<String> warned = ConcurrentHashMap.newKeySet();

    public ResultRenderer(ResponseRecorder recorder, Providers providers, Class<?> resourceClass, Method method, String endpoint) {
        this.recorder = recorder;
        this.providers = providers;
        this.method = method;
        this.endpoint = endpoint;
        this.produces = produces(resourceClass, method);
    }

    /** The status JAX-RS answers for this result of a method: the {@link Response}'s, else 200, or 204 without an entity. */
    public static int status(Object result) {
        if (result instanceof Response response) {
            return response.getStatus();
        }
        return result == null ? 204 : 200;
    }

    /**
     * @param result     what the method returned ({@code null} for {@code void})
     * @param acceptable the request's acceptable media types, most preferred first
     * @param baseUri    the application's base URI, against which a relative {@code Location} resolves
     */
    public Optional<StoredResponse> render(Object result, List<MediaType> acceptable, URI baseUri) {
        int status = status(result);
        Object entity;
        MultivaluedMap<String, Object> headers = new MultivaluedHashMap<>();
        MediaType mediaType = null;
        if (result instanceof Response response) {
            entity = response.getEntity();
            response.getHeaders().forEach((name, values) -> headers.put(name, new ArrayList<>(values)));
            mediaType = response.getMediaType();
        } else {
            entity = result;
        }
        resolveLocation(headers, baseUri);
        if (entity == null) {
            return Optional.of(recorder.record(status, headers, null, new byte[0]));
        }
        if (entity instanceof InputStream || entity instanceof Reader || entity instanceof StreamingOutput) {
            return notRendered("stream", "its entity is a stream, which can be written once only");
        }
        if (mediaType == null) {
            mediaType = negotiated(acceptable).orElse(null);
            if (mediaType == null) {
                return notRendered("media-type", "its media type is not fixed: declare one @Produces type the client"
                        + " accepts, or set the Response's type");
            }
        }
        Class<?> type = entity.getClass();
        Type genericType = type;
        if (entity instanceof GenericEntity<?> generic) {
            entity = generic.getEntity();
            type = generic.getRawType();
            genericType = generic.getType();
        } else if (!(result instanceof Response)) {
            genericType = method.getGenericReturnType();
        }
        return write(status, headers, entity, type, genericType, mediaType);
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private Optional<StoredResponse> write(int status, MultivaluedMap<String, Object> headers, Object entity,
                                           Class<?> type, Type genericType, MediaType mediaType) {
        Annotation[] annotations = method.getAnnotations();
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        try {
            MessageBodyWriter writer = providers.getMessageBodyWriter(type, genericType, annotations, mediaType);
            if (writer == null) {
                return notRendered("writer", "no MessageBodyWriter writes " + type.getName() + " as " + mediaType);
            }
            writer.writeTo(entity, type, genericType, annotations, mediaType, new MultivaluedHashMap<>(headers), body);
        } catch (IOException | RuntimeException e) {
            return notRendered("write", "its entity could not be written ahead (" + e + ")");
        }
        return Optional.of(recorder.record(status, headers, mediaType, body.toByteArray()));
    }

    /** The one declared type the client accepts, as the runtime will choose it. */
    private Optional<MediaType> negotiated(List<MediaType> acceptable) {
        List<MediaType> matches = new ArrayList<>();
        for (MediaType offered : produces) {
            if (!offered.isWildcardType() && !offered.isWildcardSubtype()
                    && (acceptable.isEmpty() || acceptable.stream().anyMatch(offered::isCompatible))) {
                Map<String, String> parameters = new HashMap<>(offered.getParameters());
                parameters.remove("qs"); // a server-side quality, never part of the response's type
                matches.add(new MediaType(offered.getType(), offered.getSubtype(), parameters));
            }
        }
        if (matches.size() == 1) {
            return Optional.of(matches.get(0));
        }
        if (matches.isEmpty() || acceptable.isEmpty()) {
            return Optional.empty();
        }
        // several offered types the client accepts: its most preferred one, if it names it exactly
        for (MediaType wanted : acceptable) {
            for (MediaType offered : matches) {
                if (offered.getType().equalsIgnoreCase(wanted.getType()) && offered.getSubtype().equalsIgnoreCase(wanted.getSubtype())) {
                    return Optional.of(offered);
                }
            }
            if (!wanted.isWildcardType() || !wanted.isWildcardSubtype()) {
                break;
            }
        }
        return Optional.empty();
    }

    private static void resolveLocation(MultivaluedMap<String, Object> headers, URI baseUri) {
        for (String name : List.copyOf(headers.keySet())) {
            if (name.equalsIgnoreCase(HttpHeaders.LOCATION)) {
                List<Object> values = headers.get(name);
                for (int i = 0; i < values.size(); i++) {
                    Object value = values.get(i);
                    URI uri = value instanceof URI given ? given : value instanceof String text ? uri(text) : null;
                    if (uri != null && !uri.isAbsolute() && baseUri != null) {
                        values.set(i, baseUri.resolve(uri)); // as the runtime writes a relative Location
                    }
                }
            }
        }
    }

    private static URI uri(String text) {
        try {
            return URI.create(text);
        } catch (IllegalArgumentException notAUri) {
            return null; // written as it is
        }
    }

    /** Logs once per endpoint and kind of reason. */
    private Optional<StoredResponse> notRendered(String kind, String why) {
        if (warned.add(kind)) {
            LOG.warning("Idemkey records the response of " + endpoint + " after its transaction, not in it, because "
                    + why + ": a crash between the commit and the record lets a retry run again");
        }
        return Optional.empty();
    }

    private static List<MediaType> produces(Class<?> resourceClass, Method method) {
        Produces produces = ResourceMethods.jaxrsDeclaration(resourceClass, method)
                .map(m -> m.getAnnotation(Produces.class)).orElse(null);
        for (Class<?> type = resourceClass; produces == null && type != null; type = type.getSuperclass()) {
            produces = type.getAnnotation(Produces.class);
        }
        List<MediaType> types = new ArrayList<>();
        if (produces != null) {
            for (String value : produces.value()) {
                for (String part : value.split(",")) {
                    types.add(MediaType.valueOf(part.trim()));
                }
            }
        }
        return List.copyOf(types);
    }
}
