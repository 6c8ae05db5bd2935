package io.idemkey.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A TCP proxy on loopback in front of a server, which can lose one reply as a network does: the
 * request reaches the server, which does the work, and when its reply comes back the proxy closes
 * the client's connection instead of passing it on (the client reads the end of the stream: a
 * broken connection, not a timeout).
 */
public final class ReplyLosingProxy implements AutoCloseable {

    private final ServerSocket listener;
    private final int targetPort;
    private final AtomicBoolean loseNextReply = new AtomicBoolean();
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private final ExecutorService threads = Executors.newCachedThreadPool(task -> {
        Thread thread = new Thread(task, "reply-losing-proxy");
        thread.setDaemon(true);
        return thread;
    });

    private ReplyLosingProxy(int targetPort) throws IOException {
        this.targetPort = targetPort;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        threads.execute(this::accept);
    }

    /** A proxy to a port of this machine's loopback, passing everything on until told otherwise. */
    public static ReplyLosingProxy to(int targetPort) {
        try {
            return new ReplyLosingProxy(targetPort);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    public int port() {
        return listener.getLocalPort();
    }

    public String url() {
        return "redis://127.0.0.1:" + port();
    }

    /** The next reply that comes back from the server, on any connection, is lost and its connection closed. */
    public void loseNextReply() {
        loseNextReply.set(true);
    }

    private void accept() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                open.add(client);
                open.add(server);
                threads.execute(() -> pump(client, server, false));
                threads.execute(() -> pump(server, client, true));
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private void pump(Socket from, Socket to, boolean replies) {
        byte[] buffer = new byte[8192];
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            for (int n; (n = in.read(buffer)) > 0; ) {
                if (replies && loseNextReply.compareAndSet(true, false)) {
                    break; // the server did the work; its client never hears of it
                }
                out.write(buffer, 0, n);
                out.flush();
            }
        } catch (IOException e) {
            // one side closed: close the other below
        } finally {
            close(from);
            close(to);
        }
    }

    private void close(Socket socket) {
        open.remove(socket);
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    @Override
    public void close() {
        try {
            listener.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        open.forEach(this::close);
        threads.shutdownNow();
    }
}
