package io.idemkey.request;

import io.idemkey.config.IdempotencySettings;
import io.idemkey.core.Execution;
import io.idemkey.core.StoredResponse;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.MultivaluedMap;
import jakarta.ws.rs.ext.RuntimeDelegate;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Logger;

/**
 * Turns a JAX-RS response into the {@link StoredResponse} to replay: the status, the allowed
 * headers (entity headers and the configured allow-list; never cookies or credentials) as the
 * client saw them, and the body bytes.
 */
public final class ResponseRecorder {

    private static final Logger LOG = Logger.getLogger(ResponseRecorder.class.getName());

    private final IdempotencySettings settings;
    private final Set<String> warnedEndpoints = ConcurrentHashMap.newKeySet();

    public ResponseRecorder(IdempotencySettings settings) {
        this.settings = settings;
    }

    /**
     * @param mediaType the entity's media type as written, or null to take {@code Content-Type} from the headers
     */
    public StoredResponse record(int status, MultivaluedMap<String, Object> headers, MediaType mediaType, byte[] body) {
        List<StoredResponse.Header> recorded = new ArrayList<>();
        if (mediaType != null) {
            recorded.add(new StoredResponse.Header(HttpHeaders.CONTENT_TYPE, mediaType.toString()));
        }
        for (Map.Entry<String, List<Object>> header : headers.entrySet()) {
            String name = header.getKey();
            if (!settings.replays(name) || (mediaType != null && name.equalsIgnoreCase(HttpHeaders.CONTENT_TYPE))
                    || name.equalsIgnoreCase(settings.replayedHeader())) {
                continue;
            }
            for (Object value : header.getValue()) {
                if (value != null) {
                    recorded.add(new StoredResponse.Header(canonicalName(name), text(value)));
                }
            }
        }
        return new StoredResponse(status, recorded, body);
    }

    /** The configured largest response kept; the raw body may be up to four times as large before compression. */
    public int captureLimit() {
        long limit = 4L * settings.maxResponseBytes();
        return (int) Math.min(Integer.MAX_VALUE - 8, limit);
    }

    public void warnInterceptorMissing(Execution execution) {
        if (warnedEndpoints.add(execution.endpoint())) {
            LOG.warning("Idemkey's CDI interceptor did not run for " + execution.endpoint() + ", so requests"
                    + " refused before the method starts cannot be told apart; make the resource a CDI bean (it is"
                    + " by default in a bean archive)");
        }
    }

    /** Entity header names in their usual spelling, so the stored form uses the short codes. */
    private static String canonicalName(String name) {
        for (String known : IdempotencySettings.ENTITY_HEADERS) {
            if (known.equalsIgnoreCase(name)) {
                return known;
            }
        }
        return name;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static String text(Object value) {
        if (value instanceof String string) {
            return string;
        }
        try {
            RuntimeDelegate.HeaderDelegate delegate = RuntimeDelegate.getInstance().createHeaderDelegate(value.getClass());
            if (delegate != null) {
                return delegate.toString(value);
            }
        } catch (IllegalArgumentException e) {
            // no delegate for this type: its toString is the header value
        }
        return value.toString();
    }
}
