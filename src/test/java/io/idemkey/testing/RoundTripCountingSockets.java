package io.idemkey.testing;

import javax.net.SocketFactory;
import java.io.FilterInputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A socket factory for pgjdbc ({@code socketFactory} connection property) whose sockets count the
 * round trips on the wire: a read that follows a write starts one (the driver wrote its messages
 * and now waits for the answer), so a statement sent in one flush and answered is one, a validation
 * query or a second statement another. Counts every socket the factory made, in one counter.
 */
public final class RoundTripCountingSockets extends SocketFactory {

    /** Round trips on every counted socket so far. */
    public static final AtomicLong ROUND_TRIPS = new AtomicLong();

    @Override
    public Socket createSocket() {
        return new CountingSocket();
    }

    @Override
    public Socket createSocket(String host, int port) throws IOException {
        Socket socket = createSocket();
        socket.connect(new java.net.InetSocketAddress(host, port));
        return socket;
    }

    @Override
    public Socket createSocket(String host, int port, InetAddress localHost, int localPort) throws IOException {
        return createSocket(host, port);
    }

    @Override
    public Socket createSocket(InetAddress host, int port) throws IOException {
        return createSocket(host.getHostAddress(), port);
    }

    @Override
    public Socket createSocket(InetAddress address, int port, InetAddress localAddress, int localPort) throws IOException {
        return createSocket(address, port);
    }

    private static final class CountingSocket extends Socket {
        /** Written since the last read: the next read waits for an answer. */
        private volatile boolean wrote;

        CountingSocket() {
            super((java.net.Proxy) java.net.Proxy.NO_PROXY);
        }

        @Override
        public InputStream getInputStream() throws IOException {
            return new FilterInputStream(super.getInputStream()) {
                @Override
                public int read() throws IOException {
                    answered();
                    return super.read();
                }

                @Override
                public int read(byte[] b, int off, int len) throws IOException {
                    answered();
                    return super.read(b, off, len);
                }
            };
        }

        private void answered() {
            if (wrote) {
                wrote = false;
                ROUND_TRIPS.incrementAndGet();
            }
        }

        @Override
        public OutputStream getOutputStream() throws IOException {
            return new FilterOutputStream(super.getOutputStream()) {
                @Override
                public void write(int b) throws IOException {
                    wrote = true;
                    out.write(b);
                }

                @Override
                public void write(byte[] b, int off, int len) throws IOException {
                    wrote = true;
                    out.write(b, off, len);
                }
            };
        }
    }

}
