package io.idemkey.jaxrs;

import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import jakarta.ws.rs.ext.InterceptorContext;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The phrase on a response shaped as Payara Micro's (Jersey's servlet response writer over
 * Catalina's facade and Grizzly's packet, which forgets its phrase when the status is set), and the
 * server or runtime without a hook, where nothing changes and nothing throws.
 */
class ServerReasonPhraseTest {

    private final ServerReasonPhrase phrases = new ServerReasonPhrase();

    @Test
    void onJerseyThePhraseIsSetAfterTheWriterSetTheStatus() {
        Facade facade = new Facade();
        JerseyRequest request = new JerseyRequest(new ServletWriter(facade));
        phrases.replaceWriter(request, "Unprocessable Content");

        assertTrue(Proxy.isProxyClass(request.writer.getClass()), "the request's writer is replaced");
        assertNull(facade.response.coyote.packet.phrase, "nothing set before the status");
        assertEquals("stream", request.writer.writeResponseStatusAndHeaders(2, null), "Jersey's answer, handed on");
        assertEquals(422, facade.response.coyote.packet.status);
        assertEquals("Unprocessable Content", facade.response.coyote.packet.phrase);
        request.writer.commit();
        assertEquals(1, ((ServletWriter) request.original).commits, "every other call reaches Jersey's writer");
    }

    @Test
    void anApplicationsResponseWrapperIsLookedThrough() {
        Facade facade = new Facade();
        JerseyRequest request = new JerseyRequest(new ServletWriter(new HttpServletResponseWrapper(facade)));
        phrases.replaceWriter(request, "Too Many Requests");
        request.writer.writeResponseStatusAndHeaders(2, null);
        assertEquals("Too Many Requests", facade.response.coyote.packet.phrase);
    }

    @Test
    void aServerWithoutAHookKeepsItsWriterAndItsPhrase() {
        JerseyRequest request = new JerseyRequest(new ServletWriter(new Stub()));
        phrases.replaceWriter(request, "Unprocessable Content");
        assertSame(request.original, request.writer);

        Object notJersey = new Object();
        assertDoesNotThrow(() -> phrases.replaceWriter(notJersey, "Unprocessable Content"));
        InterceptorContext notResteasy = (InterceptorContext) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[]{InterceptorContext.class}, (proxy, method, args) ->
                        method.getName().equals("getProperty") ? "Unprocessable Content" : null);
        assertDoesNotThrow(() -> phrases.writing(notResteasy));
    }

    @Test
    void aFailingServerNeverFailsTheRequestAndIsLeftAlone() {
        Facade facade = new Facade();
        facade.response.coyote.packet.refuse = true;
        JerseyRequest request = new JerseyRequest(new ServletWriter(facade));
        phrases.replaceWriter(request, "Unprocessable Content");
        assertEquals("stream", request.writer.writeResponseStatusAndHeaders(2, null));
        assertEquals(422, facade.response.coyote.packet.status);

        JerseyRequest next = new JerseyRequest(new ServletWriter(new Facade()));
        phrases.replaceWriter(next, "Unprocessable Content");
        assertSame(next.original, next.writer, "stepped aside");
    }

    /** Jersey's {@code ContainerResponseWriter}, as far as this reaches into it. */
    public interface Writer {
        Object writeResponseStatusAndHeaders(long length, Object response);

        void commit();
    }

    /** Jersey's {@code ContainerRequest}: its writer, which a container may replace. */
    public static final class JerseyRequest {
        final Writer original;
        Writer writer;

        JerseyRequest(Writer writer) {
            this.original = writer;
            this.writer = writer;
        }

        public Writer getResponseWriter() {
            return writer;
        }

        public void setWriter(Writer writer) {
            this.writer = writer;
        }
    }

    /** Jersey's servlet response writer: sets the status on the servlet response it holds. */
    public static final class ServletWriter implements Writer {
        private final HttpServletResponse response;
        int commits;

        ServletWriter(HttpServletResponse response) {
            this.response = response;
        }

        @Override
        public Object writeResponseStatusAndHeaders(long length, Object context) {
            response.setStatus(422);
            return "stream";
        }

        @Override
        public void commit() {
            commits++;
        }
    }

    /** Catalina's facade: the response behind it in a field. */
    public static final class Facade extends Stub {
        protected final CatalinaResponse response = new CatalinaResponse();

        @Override
        public void setStatus(int status) {
            response.coyote.setStatus(status);
        }
    }

    public static final class CatalinaResponse {
        final GrizzlyResponse coyote = new GrizzlyResponse();

        public GrizzlyResponse getCoyoteResponse() {
            return coyote;
        }
    }

    public static final class GrizzlyResponse {
        final Packet packet = new Packet();

        public Packet getResponse() {
            return packet;
        }

        /** As Grizzly's: the status set, the phrase forgotten. */
        public void setStatus(int status) {
            packet.status = status;
            packet.phrase = null;
        }
    }

    public static final class Packet {
        int status;
        String phrase;
        boolean refuse;

        public void setReasonPhrase(String phrase) {
            if (refuse) {
                throw new IllegalStateException("refused");
            }
            this.phrase = phrase;
        }
    }

    /** A servlet response that takes no phrase. */
    public static class Stub implements HttpServletResponse {
        private int status = 200;

        @Override public void setStatus(int a0) { status = a0; }
        @Override public int getStatus() { return status; }
        @Override public void addCookie(jakarta.servlet.http.Cookie a0) { }
        @Override public boolean containsHeader(String a0) { return false; }
        @Override public String encodeURL(String a0) { return null; }
        @Override public String encodeRedirectURL(String a0) { return null; }
        @Override public void sendError(int a0, String a1) throws java.io.IOException { }
        @Override public void sendError(int a0) throws java.io.IOException { }
        @Override public void sendRedirect(String a0) throws java.io.IOException { }
        @Override public void setDateHeader(String a0, long a1) { }
        @Override public void addDateHeader(String a0, long a1) { }
        @Override public void setHeader(String a0, String a1) { }
        @Override public void addHeader(String a0, String a1) { }
        @Override public void setIntHeader(String a0, int a1) { }
        @Override public void addIntHeader(String a0, int a1) { }
        @Override public String getHeader(String a0) { return null; }
        @Override public java.util.Collection<String> getHeaders(String a0) { return null; }
        @Override public java.util.Collection<String> getHeaderNames() { return null; }
        @Override public String getCharacterEncoding() { return null; }
        @Override public String getContentType() { return null; }
        @Override public jakarta.servlet.ServletOutputStream getOutputStream() throws java.io.IOException { return null; }
        @Override public java.io.PrintWriter getWriter() throws java.io.IOException { return null; }
        @Override public void setCharacterEncoding(String a0) { }
        @Override public void setContentLength(int a0) { }
        @Override public void setContentLengthLong(long a0) { }
        @Override public void setContentType(String a0) { }
        @Override public void setBufferSize(int a0) { }
        @Override public int getBufferSize() { return 0; }
        @Override public void flushBuffer() throws java.io.IOException { }
        @Override public void resetBuffer() { }
        @Override public boolean isCommitted() { return false; }
        @Override public void reset() { }
        @Override public void setLocale(java.util.Locale a0) { }
        @Override public java.util.Locale getLocale() { return null; }
    }
}
