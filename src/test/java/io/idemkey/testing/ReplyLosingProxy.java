package io.idemkey.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A TCP proxy on loopback in front of a server, which can lose one reply as a network does: the
 * request reaches the server, which does the work, and when its reply comes back the proxy closes
 * the client's connection instead of passing it on (the client reads the end of the stream: a
 * broken connection, not a timeout). It can also make a Redis 7 answer {@code SET}'s {@code GET}
 * option as a Redis before 7.0 does ({@link #refuseSetGet}).
 */
public final class ReplyLosingProxy implements AutoCloseable {

    private final ServerSocket listener;
    private final int targetPort;
    private final AtomicBoolean loseNextReply = new AtomicBoolean();
    private volatile boolean refuseSetGet;
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

    /**
     * From now on {@code SET}'s {@code GET} option reaches the server as an option it does not know
     * ({@code GXT}, renamed on the way), so it answers {@code ERR syntax error}, as a Redis before
     * 7.0 does to {@code GET} beside {@code NX}. (A {@code GET} command would be renamed too: the
     * store sends none.)
     */
    public void refuseSetGet() {
        refuseSetGet = true;
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
                if (!replies && refuseSetGet) {
                    renameGet(buffer, n);
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

    /** {@code $3\r\nGET\r\n} to {@code $3\r\nGXT\r\n} in what was read (a request is written at once: not split here). */
    private static void renameGet(byte[] buffer, int length) {
        byte[] get = "$3\r\nGET\r\n".getBytes(StandardCharsets.US_ASCII);
        for (int i = 0; i + get.length <= length; i++) {
            if (Arrays.equals(buffer, i, i + get.length, get, 0, get.length)) {
                buffer[i + 5] = 'X';
            }
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
