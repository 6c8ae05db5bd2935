package io.idemkey.client;

import org.junit.jupiter.api.Test;

import java.lang.reflect.Method;
import java.lang.reflect.Proxy;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The interceptor retries calls on a client proxy, and steps aside for the server's implementation. */
class RestClientRetriesTest {

    interface TransfersApi {
        String transfer(String body);

        String upload(java.io.InputStream document);

        java.util.concurrent.CompletionStage<String> transferAsync(String body);
    }

    static class TransferResource implements TransfersApi {
        @Override
        public String transfer(String body) {
            return body;
        }

        @Override
        public String upload(java.io.InputStream document) {
            return "";
        }

        @Override
        public java.util.concurrent.CompletionStage<String> transferAsync(String body) {
            return java.util.concurrent.CompletableFuture.completedFuture(body);
        }
    }

    @Test
    void aCallOfTheSharedInterfaceOnAClientProxyIsRetriedButNotOneOnTheServersResource() throws Exception {
        Method method = TransfersApi.class.getMethod("transfer", String.class);
        Object proxy = Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[]{TransfersApi.class}, (p, m, a) -> "sent");

        assertTrue(RestClientRetries.clientCall(method, proxy), "the Rest Client's proxy (RESTEasy's invocation target)");
        assertTrue(RestClientRetries.clientCall(method, new Object()), "another target that is no implementation (Jersey's)");
        assertTrue(RestClientRetries.clientCall(method, null));
        assertFalse(RestClientRetries.clientCall(method, new TransferResource()), "the server's resource runs once, unretried");
        assertFalse(RestClientRetries.clientCall(TransferResource.class.getMethod("transfer", String.class), new TransferResource()));
    }

    @Test
    void methodsWhoseCallsCannotBeRetriedSafelyAreRefusedNamingTheReason() throws Exception {
        UnsupportedOperationException stream = assertThrows(UnsupportedOperationException.class,
                () -> RestClientRetries.loopOf(TransfersApi.class.getMethod("upload", java.io.InputStream.class)));
        UnsupportedOperationException async = assertThrows(UnsupportedOperationException.class,
                () -> RestClientRetries.loopOf(TransfersApi.class.getMethod("transferAsync", String.class)));

        assertTrue(stream.getMessage().contains("TransfersApi.upload()") && stream.getMessage().contains("InputStream parameter"),
                stream.getMessage());
        assertTrue(async.getMessage().contains("asynchronous"), async.getMessage());
    }
}
