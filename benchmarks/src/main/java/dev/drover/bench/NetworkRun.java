package dev.drover.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.drover.common.UserText;
import dev.drover.network.AllocNetworks;
import dev.drover.network.AttachedNetwork;
import dev.drover.network.CniPlugins;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.stream.IntStream;
import java.util.stream.Stream;

/**
 * One run of {@link NetworkBench}: a network set up and torn down alone (the cost of one call with nothing beside
 * it), then N set up at the set concurrency, counted, and torn down, counted again; and what one plugin's exec and
 * one iptables call cost on their own, before and with the N networks' rules in place.
 */
final class NetworkRun {

    private static final ObjectMapper JSON = new ObjectMapper();
    /** Samples of the exec-only timings; their median is reported. */
    private static final int SAMPLES = 20;

    private final NetworkBench.Options o;
    private final Path data;
    private final CniPlugins plugins;
    private final AllocNetworks networks;
    private final List<String> containerIds;

    NetworkRun(NetworkBench.Options o, Path data, CniPlugins plugins) throws IOException {
        this.o = o;
        this.data = data;
        this.plugins = plugins;
        this.networks = NetworkBench.networks(data, plugins);
        this.containerIds = IntStream.rangeClosed(0, o.allocs())
                .mapToObj(i -> AllocNetworks.containerId(NetworkBench.allocId(i)))
                .toList();
    }

    ObjectNode measure() throws IOException, InterruptedException {
        ObjectNode r = JSON.createObjectNode();
        r.put("allocs", o.allocs()).put("concurrency", o.threads());
        r.put("pluginExecSeconds", round(median(SAMPLES, this::pluginVersion)));
        r.put("iptablesCallSecondsBefore", round(median(SAMPLES, NetworkRun::iptablesCall)));
        NetworkCounts before = counts();

        int alone = o.allocs(); // an index past the measured ones; its port is P+N
        long t = System.nanoTime();
        AttachedNetwork one = NetworkBench.setUp(networks, o, alone);
        r.put("aloneSetupSeconds", round((System.nanoTime() - t) / 1e9));
        t = System.nanoTime();
        List<String> oneLeft = networks.tearDown(one);
        r.put("aloneTeardownSeconds", round((System.nanoTime() - t) / 1e9));

        AtomicReferenceArray<AttachedNetwork> made = new AtomicReferenceArray<>(o.allocs());
        AtomicInteger failures = new AtomicInteger();
        AtomicReference<String> firstFailure = new AtomicReference<>();
        long begin = System.nanoTime();
        List<Double> setUp = NetworkBench.timed(o.allocs(), o.threads(), i -> {
            try {
                made.set(i, NetworkBench.setUp(networks, o, i));
            } catch (IOException | RuntimeException e) {
                failures.incrementAndGet();
                firstFailure.compareAndSet(null, String.valueOf(e.getMessage()));
            }
        });
        double setUpAll = (System.nanoTime() - begin) / 1e9;
        NetworkCounts up = counts();
        r.put("iptablesCallSecondsWithRules", round(median(SAMPLES, NetworkRun::iptablesCall)));

        AtomicInteger problems = new AtomicInteger(oneLeft.size());
        AtomicReference<String> firstProblem = new AtomicReference<>(oneLeft.isEmpty() ? null : oneLeft.getFirst());
        begin = System.nanoTime();
        List<Double> tearDown = NetworkBench.timed(o.allocs(), o.threads(), i -> {
            AttachedNetwork n = made.get(i);
            if (n != null) {
                List<String> left = networks.tearDown(n);
                problems.addAndGet(left.size());
                if (!left.isEmpty()) {
                    firstProblem.compareAndSet(null, left.getFirst());
                }
            }
        });
        double tearDownAll = (System.nanoTime() - begin) / 1e9;
        NetworkCounts after = counts();

        put(r, "setup", Spread.of(setUp), setUpAll);
        put(r, "teardown", Spread.of(tearDown), tearDownAll);
        r.put("setupFailures", failures.get());
        r.put("teardownProblems", problems.get());
        if (firstFailure.get() != null) {
            r.put("firstSetupFailure", UserText.cutEscaped(firstFailure.get(), 500));
        }
        if (firstProblem.get() != null) {
            r.put("firstTeardownProblem", UserText.cutEscaped(firstProblem.get(), 500));
        }
        counts(r.putObject("made"), up, before);
        counts(r.putObject("left"), after, before);
        return r;
    }

    private NetworkCounts counts() throws IOException, InterruptedException {
        return NetworkCounts.read(
                data.resolve("netns"), data.resolve("cni").resolve("networks").resolve("drover"), containerIds);
    }

    /** {@code now} less {@code before}; the rules naming an allocation as they are (none can be there before). */
    private static void counts(ObjectNode into, NetworkCounts now, NetworkCounts before) {
        into.put("veths", now.veths() - before.veths())
                .put("rules", now.rules() - before.rules())
                .put("rulesOfAllocations", now.rulesOfAllocations())
                .put("namespaces", now.namespaces() - before.namespaces())
                .put("leases", now.leases() - before.leases());
    }

    private static void put(ObjectNode r, String phase, Spread s, double all) {
        r.put(phase + "P50Seconds", round(s.p50()))
                .put(phase + "P90Seconds", round(s.p90()))
                .put(phase + "P99Seconds", round(s.p99()))
                .put(phase + "MaxSeconds", round(s.max()))
                .put(phase + "AllSeconds", round(all));
    }

    /** One exec of the bridge plugin that does nothing but answer its versions: what starting a plugin costs. */
    private double pluginVersion() throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(plugins.plugin("bridge").toString())
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD);
        pb.environment().clear();
        pb.environment().put("CNI_COMMAND", "VERSION");
        long t = System.nanoTime();
        Process p = pb.start();
        try (var in = p.getOutputStream()) {
            in.write("{\"cniVersion\":\"1.0.0\"}".getBytes(StandardCharsets.UTF_8));
        }
        finish(p, "bridge VERSION");
        return (System.nanoTime() - t) / 1e9;
    }

    /** One iptables-nft call that reads the nat table (as each of the plugins' iptables calls does). */
    private static double iptablesCall() throws IOException, InterruptedException {
        long t = System.nanoTime();
        Process p = new ProcessBuilder("iptables", "-w", "-t", "nat", "-S", "POSTROUTING")
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        finish(p, "iptables -t nat -S POSTROUTING");
        return (System.nanoTime() - t) / 1e9;
    }

    private static void finish(Process p, String what) throws IOException, InterruptedException {
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly().waitFor();
            throw new IOException(what + " ran past 30 s");
        }
        if (p.exitValue() != 0) {
            throw new IOException(what + " failed (exit status " + p.exitValue() + ")");
        }
    }

    @FunctionalInterface
    private interface Sample {
        double seconds() throws IOException, InterruptedException;
    }

    private static double median(int n, Sample s) throws IOException, InterruptedException {
        List<Double> all = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            all.add(s.seconds());
        }
        return Spread.of(all).p50();
    }

    /** Seconds to the tenth of a millisecond. */
    static double round(double v) {
        return Math.round(v * 10_000) / 10_000.0;
    }

    /** Removes {@code dir} and everything in it, links as links (never followed). */
    static void removeTree(Path dir) throws IOException {
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
