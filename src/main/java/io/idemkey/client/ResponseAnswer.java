package io.idemkey.client;

import jakarta.ws.rs.core.Response;

import java.util.Optional;

/** A JAX-RS {@link Response} as the retry loop sees it. */
record ResponseAnswer(Response response) implements RetryLoop.Answer {

    @Override
    public int status() {
        return response.getStatus();
    }

    @Override
    public Optional<String> header(String name) {
        return Optional.ofNullable(response.getHeaderString(name));
    }

    /** Buffers the body first, so that a 422 handed to the caller can still be read by it. */
    @Override
    public Problem problem() {
        return problemOf(response);
    }

    @Override
    public void discard() {
        try {
            response.close();
        } catch (RuntimeException alreadyClosed) {
            // nothing left to free
        }
    }

    static Problem problemOf(Response response) {
        String body = null;
        try {
            if (response.hasEntity()) {
                response.bufferEntity();
                body = response.readEntity(String.class);
            }
        } catch (RuntimeException unreadable) {
            // keep the status only
        }
        return Problem.parse(response.getStatus(), body);
    }
}
