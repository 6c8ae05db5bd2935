package io.idemkey.testing;

import java.util.ArrayList;
import java.util.List;

/**
 * Where a test starts a server process: its address, and what its command line is prefixed with to
 * run it there ({@code ip netns exec <namespace>} for a network namespace of the benchmark's own,
 * nothing on this machine's loopback).
 *
 * @param address  the address the server listens on and clients connect to
 * @param launcher the command that runs the server's command there (empty: this machine)
 */
public record Host(String address, List<String> launcher) {

    /** This machine's loopback: where every test's servers run. */
    public static final Host LOOPBACK = new Host("127.0.0.1", List.of());

    public Host {
        launcher = List.copyOf(launcher);
    }

    /** {@code command}, run on this host. */
    public List<String> command(List<String> command) {
        List<String> line = new ArrayList<>(launcher);
        line.addAll(command);
        return line;
    }
}
