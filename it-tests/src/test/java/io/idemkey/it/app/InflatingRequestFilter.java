package io.idemkey.it.app;

import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.container.PreMatching;
import jakarta.ws.rs.ext.Provider;

import java.util.zip.InflaterInputStream;

/**
 * An application filter that decodes a deflated request body (header X-Deflated-Body) before
 * anything else reads it, and leaves its Content-Length as it came: the entity stream then holds
 * more than the header says, as behind many decompressing or decrypting filters.
 */
@Provider
@PreMatching
public class InflatingRequestFilter implements ContainerRequestFilter {
    @Override
    public void filter(ContainerRequestContext request) {
        if (request.getHeaderString("X-Deflated-Body") != null) {
            request.setEntityStream(new InflaterInputStream(request.getEntityStream()));
        }
    }
}
