package io.idemkey.client;

import jakarta.ws.rs.HttpMethod;
import jakarta.ws.rs.client.Entity;
import jakarta.ws.rs.client.Invocation;
import jakarta.ws.rs.client.WebTarget;
import jakarta.ws.rs.core.Response;

import java.io.InputStream;
import java.io.Reader;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/**
 * One logical operation: built like a JAX-RS {@link Invocation.Builder}, sent with one
 * {@code Idempotency-Key} however many attempts it takes. A new request has a new random key
 * (UUID v4); a caller that retries at a higher level (a job run again, a user pressing the button
 * again) keeps the operation's key and hands it back with {@link #key(String)}.
 *
 * <p>The {@link Response} forms return the final answer (a success, or a {@code 4xx} not worth
 * retrying) as JAX-RS would; the typed forms return the success's entity and throw
 * {@link IdempotentCallException} for any other answer. Both throw {@link KeyReusedException} when
 * the server refuses the key as used with another request, and {@link RetriesExhaustedException}
 * when the attempts or the time run out.
 */
public final class IdempotentRequest {

    private final WebTarget target;
    private final RetryLoop loop;
    private final List<Map.Entry<String, Object>> headers = new ArrayList<>();
    private String[] accepted = new String[0];
    private String key = UUID.randomUUID().toString();

    IdempotentRequest(WebTarget target, RetryLoop loop) {
        this.target = Objects.requireNonNull(target, "target");
        this.loop = loop;
    }

    /**
     * Uses this key instead of a new one: the operation's key from an earlier try.
     *
     * @param key the key, as the caller keeps it for this operation
     * @return this request
     */
    public IdempotentRequest key(String key) {
        if (key == null || key.isBlank() || key.chars().anyMatch(c -> c < 0x21 || c > 0x7e || c == '"' || c == '\\')) {
            throw new IllegalArgumentException("An Idempotency-Key is visible ASCII without '\"' and '\\', not '" + key + "'");
        }
        this.key = key;
        return this;
    }

    /**
     * The operation's key.
     *
     * @return the key every attempt carries
     */
    public String key() {
        return key;
    }

    /**
     * The media types the caller accepts.
     *
     * @param mediaTypes media types, as {@code Accept} lists them
     * @return this request
     */
    public IdempotentRequest accept(String... mediaTypes) {
        this.accepted = mediaTypes.clone();
        return this;
    }

    /**
     * A header sent with every attempt.
     *
     * @param name the header's name
     * @param value its value
     * @return this request
     */
    public IdempotentRequest header(String name, Object value) {
        if (IdempotentRequests.KEY_HEADER.equalsIgnoreCase(name)) {
            throw new IllegalArgumentException("Give the key with key(String): it is sent as " + IdempotentRequests.KEY_HEADER);
        }
        headers.add(Map.entry(name, value));
        return this;
    }

    /**
     * Sends a {@code POST} until an answer is final.
     *
     * @param entity the body
     * @return the final answer (the caller closes it)
     */
    public Response post(Entity<?> entity) {
        return method(HttpMethod.POST, entity);
    }

    /**
     * Sends a {@code POST} until an answer is final; returns the entity of a success, else throws.
     *
     * @param <T> the entity's type
     * @param entity the body
     * @param type the entity's class
     * @return the entity of the successful answer
     */
    public <T> T post(Entity<?> entity, Class<T> type) {
        return method(HttpMethod.POST, entity, type);
    }

    /**
     * Sends a {@code PUT} until an answer is final.
     *
     * @param entity the body
     * @return the final answer (the caller closes it)
     */
    public Response put(Entity<?> entity) {
        return method(HttpMethod.PUT, entity);
    }

    /**
     * Sends a {@code PATCH} until an answer is final.
     *
     * @param entity the body
     * @return the final answer (the caller closes it)
     */
    public Response patch(Entity<?> entity) {
        return method(HttpMethod.PATCH, entity);
    }

    /**
     * Sends a {@code DELETE} until an answer is final.
     *
     * @return the final answer (the caller closes it)
     */
    public Response delete() {
        return method(HttpMethod.DELETE, null);
    }

    /**
     * Sends the operation until an answer is final; returns it.
     *
     * @throws IllegalArgumentException for an entity that can be sent only once (an {@link InputStream}
     *                                  or a {@link Reader}): a retry would send it empty under the same key
     * @param name the HTTP method
     * @param entity the body, or {@code null}
     * @return the final answer (the caller closes it)
     */
    public Response method(String name, Entity<?> entity) {
        return send(name, entity).answer().response();
    }

    /**
     * Sends the operation until an answer is final; returns the entity of a success, else throws.
     *
     * @param <T> the entity's type
     * @param name the HTTP method
     * @param entity the body, or {@code null}
     * @param type the entity's class
     * @return the entity of the successful answer
     */
    public <T> T method(String name, Entity<?> entity, Class<T> type) {
        RetryLoop.Final<ResponseAnswer> sent = send(name, entity);
        Response response = sent.answer().response();
        int status = response.getStatus();
        if (status >= 200 && status < 300) {
            try {
                return response.readEntity(type);
            } catch (RuntimeException unreadable) {
                response.close();
                throw unreadable;
            }
        }
        Problem problem = ResponseAnswer.problemOf(response);
        response.close();
        throw new IdempotentCallException(name + " " + target.getUri() + " was refused with the key " + key + ": " + problem,
                key, sent.attempts(), status, problem, null);
    }

    private RetryLoop.Final<ResponseAnswer> send(String name, Entity<?> entity) {
        if (entity != null && (entity.getEntity() instanceof InputStream || entity.getEntity() instanceof Reader)) {
            throw new IllegalArgumentException("An entity that can be read only once cannot be sent again by a retry:"
                    + " give " + name + " " + target.getUri() + " a byte[], String or object instead of a "
                    + entity.getEntity().getClass().getName());
        }
        return loop.run(name + " " + target.getUri(), key, () -> new ResponseAnswer(attempt(name, entity)));
    }

    private Response attempt(String name, Entity<?> entity) {
        Invocation.Builder builder = target.request(accepted).header(IdempotentRequests.KEY_HEADER, IdempotentRequests.headerValue(key));
        for (Map.Entry<String, Object> header : headers) {
            builder.header(header.getKey(), header.getValue());
        }
        return entity == null ? builder.method(name) : builder.method(name, entity);
    }
}
