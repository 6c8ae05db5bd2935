package io.idemkey.it.client;

import io.idemkey.IdempotencyKey;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.rest.client.inject.RegisterRestClient;

/**
 * The shared contract: the server's {@link TransferResource} implements it, callers use it as a
 * MicroProfile Rest Client. The one {@code @IdempotencyKey} guards the server's method and makes
 * the client's calls retry safely.
 */
@Path("transfers")
@RegisterRestClient(configKey = "transfers")
public interface TransfersApi {

    /**
     * Books a transfer once per key.
     *
     * @param key the operation's key when the caller keeps its own, else {@code null} (Idemkey makes one)
     */
    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    @IdempotencyKey
    Response transfer(@HeaderParam("Idempotency-Key") String key, Transfer transfer);
}
