package dev.drover.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.drover.cli.flags.Flag;
import dev.drover.cli.flags.FlagParser;
import dev.drover.cli.flags.HelpText;
import dev.drover.cli.flags.ParsedArgs;
import dev.drover.cli.flags.UsageError;
import dev.drover.common.UserText;
import dev.drover.network.AllocNetworks;
import dev.drover.network.AttachedNetwork;
import dev.drover.network.BridgeSettings;
import dev.drover.network.CniPlugins;
import dev.drover.network.NetworkMode;
import dev.drover.network.PortMapping;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;

/**
 * {@code java -jar drover-bench.jar network [FLAGS]}: N bridge networks set up through the agent's own
 * {@link AllocNetworks} (namespace, loopback, bridge with host-local, portmap of one port), each call timed, then torn
 * down, timed; prints one JSON line with the spread of both, what was made and what is left (docs/BENCHMARKS.md,
 * "Networks"). Refuses to run in the machine's own network namespace ({@link HostNetworkGuard}).
 */
final class NetworkBench {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** The agent's default {@code concurrentStarts}: at most that many allocations are being started at once. */
    static final int AGENT_START_SLOTS = 32;
    /** The default subnet leases about 4 000 addresses. */
    static final int MAX_ALLOCS = 4000;

    static final Flag ALLOCS = Flag.valued("--allocs", null, "N", "bridge networks to set up (default 200)");
    static final Flag CONCURRENCY = Flag.valued(
            "--concurrency",
            null,
            "C",
            "set-ups (and teardowns) at once; 0: all at once (default " + AGENT_START_SLOTS
                    + ", the agent's concurrentStarts)");
    static final Flag CNI_BIN_DIR =
            Flag.valued("--cni-bin-dir", null, "DIR", "the CNI reference plugins (default /usr/lib/cni)");
    static final Flag PORT_BASE = Flag.valued(
            "--host-port-base",
            null,
            "P",
            "allocation i maps host port P+i to its port 8080 (default 20000; P+N is used too)");
    static final Flag TOUCH_HOST = Flag.on(
            "--i-know-this-touches-the-host-network",
            null,
            "run even in the machine's own network namespace (its bridge and shared chains stay there)");
    static final List<Flag> FLAGS = List.of(ALLOCS, CONCURRENCY, CNI_BIN_DIR, PORT_BASE, TOUCH_HOST, FlagParser.HELP);

    /** The subcommand's arguments. */
    record Options(int allocs, int concurrency, Path cniBinDir, int hostPortBase, boolean touchHost, boolean help) {

        /** Threads that call at once: {@code concurrency}, or every allocation's for 0. */
        int threads() {
            return concurrency == 0 ? allocs : Math.min(concurrency, allocs);
        }
    }

    private NetworkBench() {}

    static Options parse(List<String> args) throws UsageError {
        ParsedArgs p = FlagParser.parse(FLAGS, args, false);
        if (p.help()) {
            return new Options(0, 0, null, 0, false, true);
        }
        if (!p.positional().isEmpty()) {
            throw new UsageError("network takes flags only, not "
                    + UserText.quote(p.positional().getFirst()));
        }
        int allocs = number(p, ALLOCS, 200, 1, MAX_ALLOCS);
        int concurrency = number(p, CONCURRENCY, AGENT_START_SLOTS, 0, MAX_ALLOCS);
        int base = number(p, PORT_BASE, 20000, 1, 65535);
        if (base + allocs > 65535) { // N measured, and one set up alone before them
            throw new UsageError("--host-port-base " + base + " leaves no room for " + (allocs + 1) + " host ports"
                    + " (the last would be " + (base + allocs) + ", past 65535)");
        }
        String dir = p.value(CNI_BIN_DIR.name());
        return new Options(
                allocs,
                concurrency,
                Path.of(dir == null ? "/usr/lib/cni" : dir).toAbsolutePath(),
                base,
                p.has(TOUCH_HOST.name()),
                false);
    }

    private static int number(ParsedArgs p, Flag flag, int otherwise, int min, int max) throws UsageError {
        String v = p.value(flag.name());
        if (v == null) {
            return otherwise;
        }
        int n;
        try {
            n = Integer.parseInt(v);
        } catch (NumberFormatException e) {
            n = min - 1;
        }
        if (n < min || n > max) {
            throw new UsageError(
                    flag.name() + " needs a whole number from " + min + " to " + max + ", not " + UserText.quote(v));
        }
        return n;
    }

    static String usage() {
        return "usage: java -jar drover-bench.jar network [--allocs N] [--concurrency C] [--cni-bin-dir DIR]\n\n"
                + "sets up N bridge networks (one port each) through the agent's AllocNetworks, C at a time, then\n"
                + "tears them down, and prints one JSON line: each phase's p50/p90/p99/max per call and its whole\n"
                + "time, what was made (veths, iptables rules, namespaces, leases) and what is left. It makes a\n"
                + "bridge and iptables rules where it runs: run it as root through benchmarks/network-bench.sh,\n"
                + "which gives it a network namespace of its own\n\n"
                + "flags:\n" + HelpText.flags(FLAGS);
    }

    /** Runs the subcommand: 0 when every network was set up and torn down, leaving nothing of an allocation's. */
    static int run(List<String> args, PrintStream out, PrintStream err) throws Exception {
        return run(
                args,
                out,
                err,
                o -> HostNetworkGuard.refusal(
                        HostNetworkGuard.SELF, HostNetworkGuard.INIT, HostNetworkGuard.interfacesUp()));
    }

    /** Why the bench must not run where it is, or empty ({@link HostNetworkGuard}). */
    @FunctionalInterface
    interface Guard {
        Optional<String> refusal(Options o) throws IOException, InterruptedException;
    }

    /** As {@link #run(List, PrintStream, PrintStream)}, asking {@code guard} whether it may run here. */
    static int run(List<String> args, PrintStream out, PrintStream err, Guard guard) throws Exception {
        Options o = parse(args);
        if (o.help()) {
            out.print(usage());
            return 0;
        }
        Optional<String> refusal = o.touchHost() ? Optional.empty() : guard.refusal(o);
        if (refusal.isPresent()) {
            err.println("drover-bench network: " + refusal.get());
            return 2;
        }
        CniPlugins plugins = new CniPlugins(o.cniBinDir());
        for (String type : List.of("loopback", "bridge", "host-local", "portmap")) {
            plugins.plugin(type); // refused here, naming it, rather than 200 times below
        }
        Path data = Files.createTempDirectory("drover-bench-network");
        try {
            ObjectNode result = new NetworkRun(o, data, plugins).measure();
            out.println(JSON.writeValueAsString(result));
            boolean clean = result.path("setupFailures").asInt() == 0
                    && result.path("teardownProblems").asInt() == 0
                    && result.path("left").path("veths").asInt() == 0
                    && result.path("left").path("rulesOfAllocations").asInt() == 0
                    && result.path("left").path("namespaces").asInt() == 0
                    && result.path("left").path("leases").asInt() == 0;
            return clean ? 0 : 1;
        } finally {
            NetworkRun.removeTree(data);
        }
    }

    /** Calls {@code call(i)} for i in [0, n), {@code threads} at a time; answers each call's seconds, unsorted. */
    static List<Double> timed(int n, int threads, TimedCall call) throws InterruptedException {
        List<Double> seconds = Collections.synchronizedList(new ArrayList<>());
        Semaphore slots = new Semaphore(threads);
        try (ExecutorService pool = Executors.newThreadPerTaskExecutor(
                Thread.ofVirtual().name("drover-bench-network-", 0).factory())) {
            for (int i = 0; i < n; i++) {
                slots.acquire();
                int index = i;
                pool.execute(() -> {
                    try {
                        long begin = System.nanoTime();
                        call.run(index);
                        seconds.add((System.nanoTime() - begin) / 1e9);
                    } finally {
                        slots.release();
                    }
                });
            }
        } // close() waits for every call
        return new ArrayList<>(seconds);
    }

    /** One timed call; it records its own failure. */
    @FunctionalInterface
    interface TimedCall {
        void run(int index);
    }

    /** Allocation {@code i}'s id, shaped as the agent's ({@code namespace/name}), and its one port. */
    static String allocId(int i) {
        return "bench/net-" + i;
    }

    static List<PortMapping> ports(Options o, int i) {
        return List.of(new PortMapping("http", o.hostPortBase() + i, 8080));
    }

    static AllocNetworks networks(Path data, CniPlugins plugins) throws IOException {
        return new AllocNetworks(data, plugins, BridgeSettings.DEFAULT);
    }

    static AttachedNetwork setUp(AllocNetworks networks, Options o, int i) throws IOException {
        return networks.setUp(allocId(i), NetworkMode.BRIDGE, ports(o, i));
    }
}
