package io.idemkey.bench;

import com.sun.tools.attach.VirtualMachine;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * async-profiler (from Maven Central: its jar carries the agent) sampling a server's JVM on CPU
 * while it is open, then writing a flame graph ({@code <name>.html}) and collapsed stacks
 * ({@code <name>.collapsed}) for the benchmark's profiles. It samples with perf events where the
 * kernel allows them, and with an interval timer otherwise.
 */
final class AsyncProfiler implements AutoCloseable {

    private final Path agent;
    private final long pid;
    private final Path output;

    private AsyncProfiler(Path agent, long pid, Path output) {
        this.agent = agent;
        this.pid = pid;
        this.output = output;
    }

    /** The agent for this machine, copied out of the jar into {@code directory}. */
    static Path extract(Path directory) throws IOException {
        Path agent = directory.resolve("libasyncProfiler.so");
        try (InputStream in = AsyncProfiler.class.getResourceAsStream("/linux-x64/libasyncProfiler.so")) {
            if (in == null) {
                throw new IOException("async-profiler's agent for linux-x64 is not on the class path");
            }
            Files.copy(in, agent, StandardCopyOption.REPLACE_EXISTING);
        }
        return agent;
    }

    /** Starts sampling {@code pid}; {@link #close} writes {@code output}.html and {@code output}.collapsed. */
    static AsyncProfiler start(Path agent, long pid, Path output) throws Exception {
        AsyncProfiler profiler = new AsyncProfiler(agent, pid, output);
        profiler.command("start,event=cpu,interval=1ms");
        return profiler;
    }

    @Override
    public void close() throws Exception {
        command("dump,collapsed,file=" + output + ".collapsed");
        command("stop,file=" + output + ".html");
    }

    private void command(String options) throws Exception {
        VirtualMachine vm = VirtualMachine.attach(Long.toString(pid));
        try {
            vm.loadAgentPath(agent.toAbsolutePath().toString(), options);
        } finally {
            vm.detach();
        }
    }
}
