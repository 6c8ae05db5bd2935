package io.idemkey.it;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP proxy on loopback between a client and a server, which loses answers the way networks do:
 * it forwards each request, and when the server's answer starts to come back it may drop the
 * connection instead (the server has done the work, the client never hears of it) or hold the
 * answer back for a while, or answer in the server's stead as a gateway does that got no valid answer
 * in time ({@code 502}, {@code 504}). It counts the server's answers by status (read from their
 * status line).
 */
public final class LossyProxy implements AutoCloseable {

    private final ServerSocket listener;
    private final int targetPort;
    private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
        Thread thread = new Thread(r, "lossy-proxy");
        thread.setDaemon(true);
        return thread;
    });
    private final AtomicInteger dropNext = new AtomicInteger();
    private final AtomicInteger gatewayNext = new AtomicInteger();
    private volatile int gatewayStatus;
    private final AtomicLong gatewayAnswers = new AtomicLong();
    private volatile double dropShare;
    private volatile double delayShare;
    private volatile Duration maxDelay = Duration.ZERO;
    private volatile double stallShare;
    private volatile Duration stall = Duration.ZERO;
    private final AtomicLong dropped = new AtomicLong();
    private final AtomicLong delayed = new AtomicLong();
    private final AtomicLong stalled = new AtomicLong();
    private final Map<Integer, AtomicLong> answers = new ConcurrentHashMap<>();
    private final Map<Integer, List<Long>> answerTimes = new ConcurrentHashMap<>();
    private final java.util.Set<Socket> open = ConcurrentHashMap.newKeySet();

    private LossyProxy(int targetPort) throws IOException {
        this.targetPort = targetPort;
        this.listener = new ServerSocket(0, 200, InetAddress.getLoopbackAddress());
        threads.execute(this::accept);
    }

    /** A proxy to a port of this machine, passing everything through until told otherwise. */
    public static LossyProxy to(int targetPort) {
        try {
            return new LossyProxy(targetPort);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    public int port() {
        return listener.getLocalPort();
    }

    /** The next {@code count} answers are dropped: the connection closes as they start to arrive. */
    public LossyProxy dropNext(int count) {
        dropNext.set(count);
        return this;
    }

    /**
     * From now on: {@code dropShare} of the answers dropped, {@code delayShare} held back up to
     * {@code maxDelay}, {@code stallShare} held back {@code stall} (past the client's read timeout).
     */
    public LossyProxy lose(double dropShare, double delayShare, Duration maxDelay, double stallShare, Duration stall) {
        this.dropShare = dropShare;
        this.delayShare = delayShare;
        this.maxDelay = maxDelay;
        this.stallShare = stallShare;
        this.stall = stall;
        return this;
    }

    /**
     * The next {@code count} answers of the server are replaced by a gateway's answer with this
     * status (a short HTML page, as proxies write): the server has done the work, the client hears
     * {@code 502} or {@code 504}.
     */
    public LossyProxy answerAsGatewayNext(int count, int status) {
        gatewayStatus = status;
        gatewayNext.set(count);
        return this;
    }

    /** The answers written in the server's stead. */
    public long gatewayAnswers() {
        return gatewayAnswers.get();
    }

    /** Passes everything through again. */
    public LossyProxy reliable() {
        dropNext.set(0);
        gatewayNext.set(0);
        return lose(0, 0, Duration.ZERO, 0, Duration.ZERO);
    }

    public long dropped() {
        return dropped.get();
    }

    public long delayed() {
        return delayed.get();
    }

    public long stalled() {
        return stalled.get();
    }

    /** How many answers with this status the server gave (dropped ones included). */
    public long answers(int status) {
        AtomicLong count = answers.get(status);
        return count == null ? 0 : count.get();
    }

    /** When the answers with this status started to arrive ({@link System#nanoTime()}), in order. */
    public List<Long> answerTimes(int status) {
        List<Long> times = answerTimes.get(status);
        if (times == null) {
            return List.of();
        }
        synchronized (times) {
            return List.copyOf(times);
        }
    }

    public Map<Integer, AtomicLong> answers() {
        return Map.copyOf(answers);
    }

    private void accept() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                client.setTcpNoDelay(true);
                server.setTcpNoDelay(true);
                open.add(client);
                open.add(server);
                AtomicBoolean awaitingAnswer = new AtomicBoolean();
                threads.execute(() -> requests(client, server, awaitingAnswer));
                threads.execute(() -> answers(client, server, awaitingAnswer));
            } catch (IOException e) {
                if (listener.isClosed()) {
                    return;
                }
            }
        }
    }

    private void requests(Socket client, Socket server, AtomicBoolean awaitingAnswer) {
        try (InputStream in = client.getInputStream(); OutputStream out = server.getOutputStream()) {
            byte[] buffer = new byte[16 * 1024];
            for (int n; (n = in.read(buffer)) >= 0; ) {
                awaitingAnswer.set(true);
                out.write(buffer, 0, n);
                out.flush();
            }
        } catch (IOException closed) {
            // either side went away
        } finally {
            closeQuietly(client, server);
        }
    }

    private void answers(Socket client, Socket server, AtomicBoolean awaitingAnswer) {
        try (InputStream in = server.getInputStream(); OutputStream out = client.getOutputStream()) {
            byte[] buffer = new byte[16 * 1024];
            for (int n; (n = in.read(buffer)) >= 0; ) {
                if (awaitingAnswer.getAndSet(false)) {
                    count(buffer, n);
                    if (gatewayNext.getAndUpdate(g -> Math.max(0, g - 1)) > 0) {
                        answerAsGateway(out);
                        return;
                    }
                    if (!deliver()) {
                        dropped.incrementAndGet();
                        return; // the server answered; the client never hears it
                    }
                }
                out.write(buffer, 0, n);
                out.flush();
            }
        } catch (IOException | InterruptedException closed) {
            // either side went away
        } finally {
            closeQuietly(client, server);
        }
    }

    private void answerAsGateway(OutputStream client) throws IOException {
        gatewayAnswers.incrementAndGet(); // counted before the client can read it (and retry, and finish)
        int status = gatewayStatus;
        String reason = status == 504 ? "Gateway Timeout" : status == 502 ? "Bad Gateway" : "Error";
        byte[] page = ("<html><body><h1>" + status + " " + reason + "</h1></body></html>").getBytes(StandardCharsets.ISO_8859_1);
        client.write(("HTTP/1.1 " + status + " " + reason + "\r\nContent-Type: text/html\r\nContent-Length: " + page.length
                + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
        client.write(page);
        client.flush();
    }

    /** Decides the fate of an answer that starts to arrive: false to drop it; true after any delay. */
    private boolean deliver() throws InterruptedException {
        if (dropNext.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            return false;
        }
        double roll = ThreadLocalRandom.current().nextDouble();
        if (roll < dropShare) {
            return false;
        }
        if (roll < dropShare + stallShare) {
            stalled.incrementAndGet();
            Thread.sleep(stall.toMillis());
        } else if (roll < dropShare + stallShare + delayShare) {
            delayed.incrementAndGet();
            Thread.sleep(ThreadLocalRandom.current().nextLong(maxDelay.toMillis() + 1));
        }
        return true;
    }

    private void count(byte[] buffer, int length) {
        String head = new String(buffer, 0, Math.min(length, 12), StandardCharsets.ISO_8859_1);
        if (head.startsWith("HTTP/1.") && head.length() >= 12) {
            try {
                int status = Integer.parseInt(head.substring(9, 12));
                answers.computeIfAbsent(status, s -> new AtomicLong()).incrementAndGet();
                List<Long> times = answerTimes.computeIfAbsent(status, s -> new ArrayList<>());
                synchronized (times) {
                    times.add(System.nanoTime());
                }
            } catch (NumberFormatException notAStatusLine) {
                // counted as nothing
            }
        }
    }

    private void closeQuietly(Socket... sockets) {
        for (Socket socket : sockets) {
            open.remove(socket);
            try {
                socket.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
    }

    @Override
    public void close() {
        closeQuietly(open.toArray(new Socket[0]));
        try {
            listener.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        threads.shutdownNow();
    }
}
