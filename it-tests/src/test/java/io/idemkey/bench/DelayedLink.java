package io.idemkey.bench;

import io.idemkey.testing.Host;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A network hop with a fixed one-way delay between this machine and a network namespace the
 * benchmark makes for itself, where it starts Redis and PostgreSQL: the application server then
 * reaches its store over a routed link, as it would another host 0.2–1 ms away. Made with, in
 * order of preference:
 * <ol>
 * <li>a veth pair with the {@code netem} queueing discipline on both ends ({@code tc qdisc ...
 *     netem delay});</li>
 * <li>where the kernel has no {@code netem}: two TUN devices joined by {@code delayline}
 *     ({@code src/test/c/delayline.c}, compiled with gcc here), which holds each packet for the
 *     delay;</li>
 * <li>where neither works (not root, no {@code ip}, no gcc): nothing, and {@link #available()}
 *     says why; the benchmark then says so and leaves the rows out.</li>
 * </ol>
 * Everything it makes (namespace, devices, process) is removed by {@link #close()}.
 */
final class DelayedLink implements AutoCloseable {

    /**
     * This process's devices and addresses, apart from those of another benchmark on the same machine
     * (fixed ones made two concurrent runs take each other's devices): from the process id.
     */
    private static final long ID = ProcessHandle.current().pid() % 10_000;
    private static final String NEAR = "10." + (100 + ID / 100) + "." + (ID % 100) + ".1";
    private static final String FAR = "10." + (100 + ID / 100) + "." + (ID % 100) + ".2";
    private static final String VETH_NEAR = "ikb" + ID + "a";
    private static final String VETH_FAR = "ikb" + ID + "b";
    private static final String TUN_NEAR = "ikd" + ID + "a";
    private static final String TUN_FAR = "ikd" + ID + "b";

    private final String namespace;
    private final String method;
    private final String unavailable;
    private final Process delayLine;
    private final Writer control;
    private final BufferedReader replies;

    private DelayedLink(String namespace, String method, String unavailable, Process delayLine) {
        this.namespace = namespace;
        this.method = method;
        this.unavailable = unavailable;
        this.delayLine = delayLine;
        this.control = delayLine == null ? null
                : new OutputStreamWriter(delayLine.getOutputStream(), StandardCharsets.US_ASCII);
        this.replies = delayLine == null ? null
                : new BufferedReader(new InputStreamReader(delayLine.getInputStream(), StandardCharsets.US_ASCII));
    }

    /** The link, made as well as this machine allows; never throws. */
    static DelayedLink open(Path workDirectory) {
        String namespace = "idemkey-bench-" + ProcessHandle.current().pid();
        try {
            run("ip", "netns", "add", namespace);
        } catch (RuntimeException e) {
            return new DelayedLink(null, null, "no network namespace (" + e.getMessage() + ")", null);
        }
        List<String> refusals = new ArrayList<>();
        try {
            run("ip", "link", "add", VETH_NEAR, "type", "veth", "peer", "name", VETH_FAR);
            run("ip", "link", "set", VETH_FAR, "netns", namespace);
            address(namespace, VETH_NEAR, VETH_FAR);
            run("tc", "qdisc", "add", "dev", VETH_NEAR, "root", "netem", "delay", "0us");
            run("ip", "netns", "exec", namespace, "tc", "qdisc", "add", "dev", VETH_FAR, "root", "netem", "delay", "0us");
            return new DelayedLink(namespace, "a veth pair with netem", null, null);
        } catch (RuntimeException e) {
            refusals.add("netem: " + e.getMessage());
            quietly("ip", "link", "del", VETH_NEAR);
        }
        Process delayLine = null;
        try {
            Path binary = workDirectory.resolve("delayline");
            run("gcc", "-O2", "-o", binary.toString(), Path.of("src", "test", "c", "delayline.c").toAbsolutePath().toString());
            delayLine = new ProcessBuilder(binary.toString(), TUN_NEAR, TUN_FAR, "0")
                    .redirectError(ProcessBuilder.Redirect.appendTo(workDirectory.resolve("delayline.log").toFile())).start();
            DelayedLink link = new DelayedLink(namespace, "two TUN devices joined by delayline (this kernel has no netem)", null,
                    delayLine);
            link.expect("ready");
            run("ip", "link", "set", TUN_FAR, "netns", namespace);
            address(namespace, TUN_NEAR, TUN_FAR);
            return link;
        } catch (RuntimeException | IOException e) {
            refusals.add("delayline: " + e.getMessage());
            if (delayLine != null) {
                delayLine.destroyForcibly();
            }
        }
        quietly("ip", "netns", "del", namespace);
        return new DelayedLink(null, null, String.join("; ", refusals), null);
    }

    /** Point-to-point addresses on both ends, the devices and the namespace's loopback up. */
    private static void address(String namespace, String near, String far) {
        run("ip", "addr", "add", NEAR, "peer", FAR, "dev", near);
        run("ip", "link", "set", near, "up");
        run("ip", "netns", "exec", namespace, "ip", "addr", "add", FAR, "peer", NEAR, "dev", far);
        run("ip", "netns", "exec", namespace, "ip", "link", "set", far, "up");
        run("ip", "netns", "exec", namespace, "ip", "link", "set", "lo", "up");
    }

    boolean available() {
        return namespace != null;
    }

    /** How the link is made, or why there is none. */
    String description() {
        return available() ? method : "no delayed link: " + unavailable;
    }

    /** Where the servers behind the link run: the namespace's address, started inside it. */
    Host far() {
        return new Host(FAR, List.of("ip", "netns", "exec", namespace));
    }

    /** Sets the one-way delay (each direction), so a round trip takes twice this on top of the link's own cost. */
    void delay(Duration oneWay) {
        long micros = oneWay.toNanos() / 1000;
        if (delayLine != null) {
            try {
                control.write(micros + "\n");
                control.flush();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            expect("delay " + micros + " us");
        } else {
            run("tc", "qdisc", "change", "dev", VETH_NEAR, "root", "netem", "delay", micros + "us");
            run("ip", "netns", "exec", namespace, "tc", "qdisc", "change", "dev", VETH_FAR, "root", "netem", "delay", micros + "us");
        }
    }

    private void expect(String line) {
        try {
            String read = replies.readLine();
            if (!line.equals(read)) {
                throw new IllegalStateException("delayline said " + read + ", not " + line);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        if (delayLine != null) {
            delayLine.destroy();
            try {
                delayLine.waitFor();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (namespace != null) {
            quietly("ip", "link", "del", VETH_NEAR);
            quietly("ip", "netns", "del", namespace);
        }
    }

    private static void quietly(String... command) {
        try {
            run(command);
        } catch (RuntimeException ignored) {
            // nothing to remove
        }
    }

    private static void run(String... command) {
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            if (process.waitFor() != 0) {
                throw new IllegalStateException(String.join(" ", command) + ": " + output);
            }
        } catch (IOException e) {
            throw new IllegalStateException(command[0] + " cannot run: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
