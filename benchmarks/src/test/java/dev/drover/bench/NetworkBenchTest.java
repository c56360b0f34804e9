package dev.drover.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drover.cli.flags.UsageError;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NetworkBenchTest {

    @TempDir
    Path dir;

    @Test
    void networkSetsUp200AsTheAgentsStartSlotsWouldByDefault() throws Exception {
        assertThat(NetworkBench.parse(List.of()))
                .isEqualTo(new NetworkBench.Options(200, 32, Path.of("/usr/lib/cni"), 20000, false, false));
        NetworkBench.Options o = NetworkBench.parse(List.of(
                "--allocs",
                "50",
                "--concurrency",
                "0",
                "--cni-bin-dir",
                "/opt/cni/bin",
                "--host-port-base",
                "30000",
                "--i-know-this-touches-the-host-network"));
        assertThat(o).isEqualTo(new NetworkBench.Options(50, 0, Path.of("/opt/cni/bin"), 30000, true, false));
        assertThat(o.threads()).as("0 is all at once").isEqualTo(50);
        assertThat(NetworkBench.parse(List.of("--allocs", "10", "--concurrency", "32"))
                        .threads())
                .isEqualTo(10);
    }

    @Test
    void whatNetworkCannotUseIsRefusedSayingWhy() {
        for (String n : List.of("0", "4001", "many")) {
            assertThatThrownBy(() -> NetworkBench.parse(List.of("--allocs", n)))
                    .isInstanceOf(UsageError.class)
                    .hasMessage("--allocs needs a whole number from 1 to 4000, not \"" + n + "\"");
        }
        assertThatThrownBy(() -> NetworkBench.parse(List.of("--concurrency", "-1")))
                .isInstanceOf(UsageError.class)
                .hasMessage("--concurrency needs a whole number from 0 to 4000, not \"-1\"");
        assertThatThrownBy(() -> NetworkBench.parse(List.of("--allocs", "200", "--host-port-base", "65400")))
                .isInstanceOf(UsageError.class)
                .hasMessage("--host-port-base 65400 leaves no room for 201 host ports (the last would be 65600,"
                        + " past 65535)");
        assertThatThrownBy(() -> NetworkBench.parse(List.of("bridge")))
                .isInstanceOf(UsageError.class)
                .hasMessage("network takes flags only, not \"bridge\"");
    }

    @Test
    void theMachinesOwnNamespaceIsRefusedUnlessToldAndNothingIsMade() throws Exception {
        Path self = Files.createSymbolicLink(dir.resolve("self"), Path.of("net:[4026531840]"));
        Path init = Files.createSymbolicLink(dir.resolve("init"), Path.of("net:[4026531840]"));
        Path own = Files.createSymbolicLink(dir.resolve("own"), Path.of("net:[4026532999]"));
        Path unreadable = dir.resolve("missing");

        assertThat(HostNetworkGuard.refusal(self, init, List.of("lo")))
                .as("PID 1's namespace, even with only loopback up")
                .hasValueSatisfying(m -> assertThat(m)
                        .contains("machine's own network namespace (net:[4026531840], PID 1's)")
                        .contains("benchmarks/network-bench.sh")
                        .contains("--i-know-this-touches-the-host-network"));
        assertThat(HostNetworkGuard.refusal(own, init, List.of("lo"))).isEmpty();
        assertThat(HostNetworkGuard.refusal(own, unreadable, List.of("lo")))
                .as("PID 1's unreadable: a namespace with loopback alone up is one unshare made")
                .isEmpty();
        assertThat(HostNetworkGuard.refusal(own, unreadable, List.of("lo", "eth0", "ifb0")))
                .as("PID 1's unreadable: one with its uplink up may be the machine's")
                .hasValueSatisfying(m -> assertThat(m)
                        .startsWith("this network namespace has eth0, ifb0 up besides lo")
                        .contains("--i-know-this-touches-the-host-network"));
        assertThat(HostNetworkGuard.refusal(own, init, List.of("lo", "veth1"))).isPresent();

        var out = new ByteArrayOutputStream();
        var err = new ByteArrayOutputStream();
        Path noPlugins = dir.resolve("no-plugins"); // were the guard passed, the missing bridge would be the error
        int exit = NetworkBench.run(
                List.of("--cni-bin-dir", noPlugins.toString()),
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8),
                o -> HostNetworkGuard.refusal(self, init, List.of("lo")));
        assertThat(exit).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("machine's own network namespace");
        assertThat(out.toString(StandardCharsets.UTF_8)).isEmpty();
    }

    @Test
    void aSpreadIsNearestRankPercentilesAndTheLongest() {
        List<Double> seconds = new ArrayList<>(
                IntStream.rangeClosed(1, 200).mapToObj(i -> i / 1000.0).toList());
        java.util.Collections.shuffle(seconds, new java.util.Random(7));
        assertThat(Spread.of(seconds)).isEqualTo(new Spread(200, 0.100, 0.180, 0.198, 0.200));
        assertThat(Spread.of(List.of(0.5))).isEqualTo(new Spread(1, 0.5, 0.5, 0.5, 0.5));
        assertThat(Spread.of(List.of())).isEqualTo(new Spread(0, 0, 0, 0, 0));
    }

    @Test
    void timedCallsRunEachOnceAtMostThreadsAtATime() throws Exception {
        var ran = ConcurrentHashMap.<Integer>newKeySet();
        var inFlight = new AtomicInteger();
        var peak = new AtomicInteger();
        var firstThree = new CountDownLatch(3);
        var together = new AtomicInteger();
        List<Double> seconds = NetworkBench.timed(40, 3, i -> {
            peak.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
            if (i < 3) { // the first three wait for each other: they can only meet if 3 run at once
                firstThree.countDown();
                try {
                    if (firstThree.await(10, TimeUnit.SECONDS)) {
                        together.incrementAndGet();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            ran.add(i);
            inFlight.decrementAndGet();
        });
        assertThat(seconds).hasSize(40).allSatisfy(s -> assertThat(s).isNotNegative());
        assertThat(ran).hasSize(40);
        assertThat(together.get()).isEqualTo(3);
        assertThat(peak.get()).isLessThanOrEqualTo(3);
    }

    @Test
    void theSubcommandPrintsItsUsageOnHelpAndOnAMistake() {
        var out = new ByteArrayOutputStream();
        var err = new ByteArrayOutputStream();
        assertThat(BenchMain.run(
                        new String[] {"network", "--help"},
                        new PrintStream(out, true, StandardCharsets.UTF_8),
                        new PrintStream(err, true, StandardCharsets.UTF_8)))
                .isZero();
        assertThat(out.toString(StandardCharsets.UTF_8))
                .startsWith("usage: java -jar drover-bench.jar network")
                .contains("--i-know-this-touches-the-host-network");
        assertThat(BenchMain.run(
                        new String[] {"network", "--allocs", "x"},
                        new PrintStream(out, true, StandardCharsets.UTF_8),
                        new PrintStream(err, true, StandardCharsets.UTF_8)))
                .isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8))
                .startsWith("drover-bench network: --allocs needs a whole number");
    }
}
