package io.idemkey.bench;

import com.sun.management.ThreadMXBean;
import com.sun.tools.attach.VirtualMachine;
import redis.clients.jedis.Jedis;

import javax.management.MBeanServerConnection;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * What the application server and Redis spend, read before and after a measured window: CPU time
 * of each process (the server's: {@code /proc/<pid>/stat}, user + system, every thread; Redis's:
 * {@link #runNanos}) and, of the server's, its
 * JIT compiler threads' ({@link #compilerCpuNanos}: how warm it is), the bytes the server's
 * threads allocated (its {@code ThreadMXBean}, through a JMX agent the benchmark starts in it with
 * the attach API), the time Redis spent running commands ({@code INFO commandstats}, the sum of
 * {@code usec}) and the reads it made from its clients' sockets ({@code INFO stats}). Divided by the requests answered in the window, these are the per-request costs,
 * steadier than throughput on a machine where load generator, server and Redis share the cores.
 */
final class Meters implements AutoCloseable {

    /**
     * One reading; {@link #minus} gives what a window cost. Redis's command time comes in three
     * parts: scripts ({@code EVAL}, {@code EVALSHA}), the commands scripts call ({@code GET},
     * {@code SET}, ...: counted on their own too, and inside their script's time), and the rest;
     * {@code SET}'s time and calls, {@code PTTL}'s calls and the scripts' calls are kept apart
     * ({@link #redisCommandMicros}).
     */
    record Reading(long serverCpuNanos, long serverCompilerCpuNanos, long serverAllocatedBytes, long redisCpuNanos,
                   long redisScriptMicros, long redisScriptableMicros, long redisOtherMicros, long redisSocketReads,
                   long redisSetMicros, long redisSetCalls, long redisPttlCalls, long redisScriptCalls) {

        Reading minus(Reading before) {
            return new Reading(serverCpuNanos - before.serverCpuNanos,
                    serverCompilerCpuNanos - before.serverCompilerCpuNanos,
                    serverAllocatedBytes - before.serverAllocatedBytes,
                    redisCpuNanos - before.redisCpuNanos, redisScriptMicros - before.redisScriptMicros,
                    redisScriptableMicros - before.redisScriptableMicros, redisOtherMicros - before.redisOtherMicros,
                    redisSocketReads - before.redisSocketReads, redisSetMicros - before.redisSetMicros,
                    redisSetCalls - before.redisSetCalls, redisPttlCalls - before.redisPttlCalls,
                    redisScriptCalls - before.redisScriptCalls);
        }

        /**
         * The time Redis spent in the commands clients sent, in a window: where scripts ran, their time
         * (which holds the commands they called) and the rest; elsewhere every command's. The store
         * sends {@code SET} itself (an acquire's, beside its {@code PTTL}; a completion's {@code SET ...
         * IFEQ} where Redis has it) and its scripts call it too, which {@code INFO commandstats} does
         * not tell apart: the {@code SET}s beyond one per {@code PTTL} (no script calls {@code PTTL}
         * on the benchmark's paths) are taken as the scripts' up to one per script call (none calls
         * more), the rest as the store's own, and the {@code SET} time is shared by calls.
         */
        long redisCommandMicros() {
            long acquires = Math.min(redisPttlCalls, redisSetCalls);
            long inScripts = Math.min(redisSetCalls - acquires, redisScriptCalls);
            long ownSets = redisSetCalls <= 0 ? 0 : redisSetMicros * (redisSetCalls - inScripts) / redisSetCalls;
            return redisScriptMicros > 0 ? redisScriptMicros + redisOtherMicros + ownSets
                    : redisScriptableMicros + redisSetMicros + redisOtherMicros;
        }
    }

    private static final Set<String> SCRIPTS = Set.of("eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro");
    /** What Idemkey's scripts call; in a window where scripts ran, these are theirs (SET and PTTL: see Reading#redisCommandMicros). */
    private static final Set<String> CALLED_BY_SCRIPTS = Set.of("get", "set", "pexpire", "pttl", "del", "incr");

    private static final long NANOS_PER_TICK = 1_000_000_000L / clockTicksPerSecond();
    /**
     * Whether this kernel keeps each thread's run time in {@code schedstat} (else {@link #runNanos}
     * falls back to clock ticks, and says so): the file may be there with zeros in it.
     */
    private static final boolean SCHEDSTAT = runsCounted();

    private final long serverPid;
    private final long redisPid;
    private final Jedis redis;
    private final JMXConnector jmx;
    private final ThreadMXBean threads;
    /**
     * Each compiler thread's ticks at the last reading (by thread id and start time: an id may be
     * reused), and a running sum of their ticks (from the JVM's start for the threads alive at the
     * first reading; only differences of readings are used).
     */
    private final Map<String, Long> compilerTicks = new HashMap<>();
    private long compiledTicks;

    /**
     * @param serverPid the application server's JVM
     * @param redisPid  the redis-server process, or 0 where there is none to measure
     * @param redis     a connection to it for its command statistics, or null
     */
    Meters(long serverPid, long redisPid, Jedis redis) {
        this.serverPid = serverPid;
        this.redisPid = redisPid;
        this.redis = redis;
        if (redisPid != 0 && !SCHEDSTAT) {
            System.out.println("this kernel keeps no run time per thread (schedstat): Redis's CPU in clock ticks of "
                    + NANOS_PER_TICK / 1_000_000 + " ms, coarse for one-second windows");
        }
        try {
            VirtualMachine vm = VirtualMachine.attach(Long.toString(serverPid));
            String address;
            try {
                address = vm.startLocalManagementAgent();
            } finally {
                vm.detach();
            }
            jmx = JMXConnectorFactory.connect(new JMXServiceURL(address));
            MBeanServerConnection connection = jmx.getMBeanServerConnection();
            threads = ManagementFactory.newPlatformMXBeanProxy(connection, ManagementFactory.THREAD_MXBEAN_NAME,
                    ThreadMXBean.class);
        } catch (Exception e) {
            throw new IllegalStateException("cannot attach to the server's JVM (pid " + serverPid + ")", e);
        }
    }

    Reading read() {
        long[] ids = threads.getAllThreadIds();
        long allocated = Arrays.stream(threads.getThreadAllocatedBytes(ids)).filter(bytes -> bytes > 0).sum();
        long[] commands = redis == null ? new long[7] : commandMicros();
        return new Reading(cpuNanos(serverPid), compilerCpuNanos(serverPid), allocated, redisPid == 0 ? 0 : runNanos(redisPid),
                commands[0], commands[1], commands[2], redis == null ? 0 : socketReads(), commands[3], commands[4], commands[5],
                commands[6]);
    }

    /** User and system time of every thread of the process, live or ended ({@code /proc/<pid>/stat} fields 14 and 15). */
    static long cpuNanos(long pid) {
        try {
            String[] fields = statFields(Files.readString(Path.of("/proc", Long.toString(pid), "stat")));
            return (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) * NANOS_PER_TICK;
        } catch (IOException e) {
            throw new UncheckedIOException("no /proc for pid " + pid, e);
        }
    }

    /**
     * The time the threads of the process have run, to the nanosecond ({@code /proc/<pid>/task/<tid>/schedstat},
     * its first field), for Redis: its CPU per window is tens of milliseconds, which {@link #cpuNanos}'
     * clock ticks (10 ms) would blur by a tenth. Its threads live as long as it does.
     */
    static long runNanos(long pid) {
        if (!SCHEDSTAT) {
            return cpuNanos(pid);
        }
        long nanos = 0;
        try (var tasks = Files.newDirectoryStream(Path.of("/proc", Long.toString(pid), "task"))) {
            for (Path task : tasks) {
                try {
                    nanos += Long.parseLong(Files.readString(task.resolve("schedstat")).split(" ")[0]);
                } catch (IOException ended) {
                    // a thread gone since the listing
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("no /proc for pid " + pid, e);
        }
        return nanos;
    }

    /** The fields of a {@code stat} line from field 3 (state) on: after the name, which may hold spaces. */
    private static String[] statFields(String stat) {
        return stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    }

    private static boolean runsCounted() {
        try {
            return Long.parseLong(Files.readString(Path.of("/proc/thread-self/schedstat")).split(" ")[0]) > 0; // this thread has run
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /**
     * User and system time of the JVM's JIT compiler threads so far ({@code C1 CompilerThread0},
     * {@code C2 CompilerThread1}, ...; {@code /proc/<pid>/task/<tid>/stat}): compiling is what a
     * server not yet warm spends beside its requests. Counted thread by thread from one reading to
     * the next, so a compiler thread the JVM ends when it has nothing to compile keeps what it was
     * seen to take (only its time since the last reading is lost).
     */
    private synchronized long compilerCpuNanos(long pid) {
        try (var tasks = Files.newDirectoryStream(Path.of("/proc", Long.toString(pid), "task"))) {
            for (Path task : tasks) {
                String stat;
                try {
                    stat = Files.readString(task.resolve("stat"));
                } catch (IOException ended) {
                    continue;
                }
                String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
                if (name.contains("CompilerThre")) { // the kernel keeps 15 characters of a thread's name
                    String[] fields = statFields(stat);
                    long ticks = Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
                    Long before = compilerTicks.put(task.getFileName() + "@" + fields[19], ticks); // field 22: start time
                    compiledTicks += ticks - (before == null ? 0 : before);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("no /proc for pid " + pid, e);
        }
        return compiledTicks * NANOS_PER_TICK;
    }

    /**
     * What Redis spent in commands so far (less these readings): {scripts' microseconds, those of the
     * commands scripts call but SET, the rest's (PTTL's among them), SET's microseconds, SET's calls,
     * PTTL's calls, the scripts' calls}.
     */
    private long[] commandMicros() {
        long[] micros = new long[7];
        for (String line : redis.info("commandstats").split("\\r?\\n")) {
            int at = line.indexOf("usec=");
            if (!line.startsWith("cmdstat_") || line.startsWith("cmdstat_info:") || at < 0) {
                continue;
            }
            String command = line.substring("cmdstat_".length(), line.indexOf(':'));
            long usec = Long.parseLong(line.substring(at + 5, line.indexOf(',', at)));
            int callsAt = line.indexOf("calls=") + 6;
            long calls = Long.parseLong(line.substring(callsAt, line.indexOf(',', callsAt)));
            if (command.equals("set")) {
                micros[3] += usec;
                micros[4] += calls;
            } else if (command.equals("pttl")) {
                micros[2] += usec;
                micros[5] += calls;
            } else if (SCRIPTS.contains(command)) {
                micros[0] += usec;
                micros[6] += calls;
            } else {
                micros[CALLED_BY_SCRIPTS.contains(command) ? 1 : 2] += usec;
            }
        }
        return micros;
    }

    /** The reads Redis made from its clients' sockets so far ({@code INFO stats}; each reading adds its own two). */
    private long socketReads() {
        for (String line : redis.info("stats").split("\r?\n")) {
            if (line.startsWith("total_reads_processed:")) {
                return Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
            }
        }
        return 0;
    }

    private static long clockTicksPerSecond() {
        try {
            Process getconf = new ProcessBuilder("getconf", "CLK_TCK").start();
            String ticks = new String(getconf.getInputStream().readAllBytes()).trim();
            getconf.waitFor();
            return Long.parseLong(ticks);
        } catch (IOException | NumberFormatException e) {
            return 100; // what Linux uses nearly everywhere
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 100;
        }
    }

    @Override
    public void close() {
        try {
            jmx.close();
        } catch (IOException ignored) {
            // the server is going away
        }
        if (redis != null) {
            redis.close();
        }
    }
}
