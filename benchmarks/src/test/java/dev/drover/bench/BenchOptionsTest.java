package dev.drover.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BenchOptionsTest {

    @TempDir
    Path dir;

    @Test
    void flagsAreRead() throws Exception {
        Path jar = Files.createFile(dir.resolve("agent.jar"));
        BenchOptions o = BenchOptions.parse(new String[] {
            "--allocs",
            "1000",
            "--tasks",
            "3",
            "--restart",
            "--agent-jar",
            jar.toString(),
            "--agent-jvm",
            " -Xmx1g  -XX:+UseSerialGC ",
            "--timeline",
            "t.csv",
            "--driver",
            "raw_exec",
            "--delete",
            "--events",
            "notable",
            "--aot"
        });
        assertThat(o)
                .isEqualTo(new BenchOptions(
                        1000,
                        3,
                        true,
                        jar,
                        List.of("-Xmx1g", "-XX:+UseSerialGC"),
                        Path.of("t.csv"),
                        "raw_exec",
                        false,
                        0,
                        true,
                        "notable",
                        true,
                        null,
                        null,
                        null,
                        "host",
                        null,
                        "1.36"));
        assertThat(o.rawExec()).isTrue();
        assertThat(o.hostTasks()).isTrue();
    }

    @Test
    void nodeSharingIsResizeOrDedicatedAndLeftToTheAgentWhenNotGiven() throws Exception {
        String jar = Files.createFile(dir.resolve("agent.jar")).toString();

        assertThat(BenchOptions.parse(new String[] {"--agent-jar", jar, "--node-sharing", "resize"})
                        .nodeSharing())
                .isEqualTo("resize");
        assertThat(BenchOptions.parse(new String[] {"--agent-jar", jar, "--node-sharing", "dedicated"})
                        .nodeSharing())
                .isEqualTo("dedicated");
        BenchOptions unset = BenchOptions.parse(new String[] {"--agent-jar", jar});
        assertThat(unset.nodeSharing()).isNull();
        assertThat(NodeSharingLoad.serverFlags(unset))
                .as("the newest API server the local cluster acts as")
                .containsExactly("--kube-version", "1.36");
        assertThat(NodeSharingLoad.taskResources(unset))
                .as("tasks asking nothing, as before")
                .isNull();
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--agent-jar", jar, "--node-sharing", "shared"}))
                .isInstanceOf(Bench.UsageException.class)
                .hasMessage("--node-sharing is resize or dedicated, not \"shared\"");
    }

    @Test
    void withNodeSharingTheNodeIsLargeEnoughResizeRunsOn135AndEachTaskAsksALittle() throws Exception {
        String jar = Files.createFile(dir.resolve("agent.jar")).toString();
        BenchOptions o = BenchOptions.parse(new String[] {"--agent-jar", jar, "--node-sharing", "dedicated"});
        BenchOptions resize = BenchOptions.parse(new String[] {"--agent-jar", jar, "--node-sharing", "resize"});

        assertThat(NodeSharingLoad.serverFlags(resize))
                .containsExactly("--kube-version", "1.35", "--node-allocatable", "cpu=64,memory=256Gi");
        assertThat(NodeSharingLoad.serverFlags(o))
                .as("the chart for 1.35 lets the agent resize its Pod, not list the node's")
                .containsExactly("--kube-version", "1.32", "--node-allocatable", "cpu=64,memory=256Gi");
        assertThat(NodeSharingLoad.taskResources(o).getCpuMillis()).isEqualTo(10);
        assertThat(NodeSharingLoad.taskResources(o).getMemoryMB()).isEqualTo(16);
    }

    @Test
    void aTrainingRunRecordsOneAgentsCacheIntoADirectoryThatExists() throws Exception {
        String jar = Files.createFile(dir.resolve("agent.jar")).toString();
        Path cache = dir.resolve("agent.aot");
        assertThat(BenchOptions.parse(new String[] {"--agent-jar", jar, "--aot-out", cache.toString()})
                        .aotOut())
                .isEqualTo(cache.toAbsolutePath());
        assertThat(BenchOptions.parse(new String[] {"--agent-jar", jar}).aotOut())
                .isNull();
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {
                    "--agent-jar",
                    jar,
                    "--aot-out",
                    dir.resolve("none").resolve("agent.aot").toString()
                }))
                .isInstanceOf(Bench.UsageException.class)
                .hasMessageStartingWith("--aot-out names a file in a directory that exists, not ");
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--agent-jar", jar, "--aot-out", "/"}))
                .isInstanceOf(Bench.UsageException.class)
                .hasMessage("--aot-out names a file, not the directory /");
        for (String expanded : List.of("agent-%p.aot", "c:agent.aot")) {
            assertThatThrownBy(() -> BenchOptions.parse(new String[] {
                        "--agent-jar", jar, "--aot-out", dir.resolve(expanded).toString()
                    }))
                    .isInstanceOf(Bench.UsageException.class)
                    .hasMessage("--aot-out takes a path without '%' or ':'");
        }
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--agent-jar", jar, "--aot-out", dir.toString()}))
                .isInstanceOf(Bench.UsageException.class)
                .hasMessage("--aot-out names a file, not the directory " + dir.toAbsolutePath());
        for (String other : List.of("--restart", "--aot")) {
            assertThatThrownBy(() ->
                            BenchOptions.parse(new String[] {"--agent-jar", jar, other, "--aot-out", cache.toString()}))
                    .isInstanceOf(Bench.UsageException.class)
                    .hasMessage("--aot-out records one agent's cache: not with --restart or --aot");
        }
    }

    @Test
    void allocationsRunInTheNodesNetworkUnlessToldBridgeWhichRawExecCannot() throws Exception {
        String jar = Files.createFile(dir.resolve("agent.jar")).toString();
        assertThat(BenchOptions.parse(new String[] {"--agent-jar", jar}).bridge())
                .isFalse();
        BenchOptions bridge = BenchOptions.parse(new String[] {"--agent-jar", jar, "--network", "bridge"});
        assertThat(bridge.network()).isEqualTo("bridge");
        assertThat(bridge.bridge()).isTrue();
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--agent-jar", jar, "--network", "none"}))
                .isInstanceOf(Bench.UsageException.class)
                .hasMessage("--network is host or bridge, not \"none\"");
        assertThatThrownBy(() -> BenchOptions.parse(
                        new String[] {"--agent-jar", jar, "--driver", "raw_exec", "--network", "bridge"}))
                .isInstanceOf(Bench.UsageException.class)
                .hasMessage("--network bridge is for mock and oci tasks: raw_exec runs in the node's");
    }

    @Test
    void theAgentFoldsTaskEventsUnlessToldOtherwise() throws Exception {
        String jar = Files.createFile(dir.resolve("agent.jar")).toString();
        assertThat(BenchOptions.parse(new String[] {"--agent-jar", jar}).taskEvents())
                .isEqualTo("folded");
        assertThat(BenchOptions.parse(new String[] {"--agent-jar", jar, "--events", "all"})
                        .taskEvents())
                .isEqualTo("all");
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--agent-jar", jar, "--events", "warnings"}))
                .isInstanceOf(Bench.UsageException.class)
                .hasMessage("--events is folded, all or notable, not \"warnings\"");
    }

    @Test
    void anHttpCheckRunMeasuresAMinuteAtSteadyStateUnlessToldHowLong() throws Exception {
        String jar = Files.createFile(dir.resolve("agent.jar")).toString();
        BenchOptions checked = BenchOptions.parse(new String[] {"--agent-jar", jar, "--http-check"});
        assertThat(checked.httpCheck()).isTrue();
        assertThat(checked.steadySeconds()).isEqualTo(60);
        assertThat(BenchOptions.parse(new String[] {"--agent-jar", jar, "--http-check", "--steady", "30"})
                        .steadySeconds())
                .isEqualTo(30);
        assertThat(BenchOptions.parse(new String[] {"--agent-jar", jar}).steadySeconds())
                .isZero();
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--agent-jar", jar, "--steady", "-1"}))
                .isInstanceOf(Bench.UsageException.class)
                .hasMessage("--steady needs a positive whole number");
    }

    @Test
    void theDriverIsMockUnlessToldRawExec() throws Exception {
        String jar = Files.createFile(dir.resolve("agent.jar")).toString();
        BenchOptions o = BenchOptions.parse(new String[] {"--agent-jar", jar});
        assertThat(o.driver()).isEqualTo("mock");
        assertThat(o.rawExec()).isFalse();
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--agent-jar", jar, "--driver", "exec"}))
                .isInstanceOf(Bench.UsageException.class)
                .hasMessage("--driver is mock, raw_exec or oci, not \"exec\"");
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--agent-jar", jar, "--driver", "x\n".repeat(50)}))
                .isInstanceOf(Bench.UsageException.class)
                .hasMessage("--driver is mock, raw_exec or oci, not \"" + "x?".repeat(20) + "...\"");
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--agent-jar", jar, "--driver"}))
                .isInstanceOf(Bench.UsageException.class)
                .hasMessage("--driver needs a value (--driver mock|raw_exec|oci)");
    }

    @Test
    void ociTasksRunTheImageGivenTrustingTheRegistrysCa() throws Exception {
        String jar = Files.createFile(dir.resolve("agent.jar")).toString();
        Path ca = Files.writeString(dir.resolve("ca.pem"), "PEM");
        BenchOptions o = BenchOptions.parse(new String[] {
            "--agent-jar", jar, "--driver", "oci", "--image", "127.0.0.1:5000/busybox:1", "--registry-ca-file", "" + ca
        });
        assertThat(o.oci()).isTrue();
        assertThat(o.hostTasks()).isTrue();
        assertThat(o.rawExec()).isFalse();
        assertThat(o.image()).isEqualTo("127.0.0.1:5000/busybox:1");
        assertThat(o.registryCaFile()).isEqualTo(ca.toAbsolutePath());
        assertThat(BenchOptions.parse(new String[] {"--agent-jar", jar, "--driver", "oci", "--image", "busybox:1"})
                        .registryCaFile())
                .isNull();
        assertThat(new RawExecTasks().agentFlags(o))
                .containsSubsequence(
                        "--enable-oci",
                        "--registry-ca-file",
                        ca.toAbsolutePath().toString())
                .contains("--cgroup-parent")
                .doesNotContain("--enable-raw-exec");
    }

    @Test
    void ociNeedsAValidImageAndTheOtherDriversTakeNone() throws Exception {
        String jar = Files.createFile(dir.resolve("agent.jar")).toString();
        Path ca = Files.writeString(dir.resolve("ca.pem"), "PEM");
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--agent-jar", jar, "--driver", "oci"}))
                .isInstanceOf(Bench.UsageException.class)
                .hasMessage("--driver oci needs --image REF");
        assertThatThrownBy(() -> BenchOptions.parse(
                        new String[] {"--agent-jar", jar, "--driver", "oci", "--image", "Busy Box:1\n"}))
                .isInstanceOf(Bench.UsageException.class)
                .hasMessageStartingWith("--image: image \"Busy Box:1\\u000a\"");
        assertThatThrownBy(() -> BenchOptions.parse(
                        new String[] {"--agent-jar", jar, "--driver", "oci", "--image", "x".repeat(10_000)}))
                .isInstanceOf(Bench.UsageException.class)
                .hasMessageEndingWith("is too long")
                .message()
                .hasSizeLessThan(200);
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--agent-jar", jar, "--image", "busybox:1"}))
                .isInstanceOf(Bench.UsageException.class)
                .hasMessage("--image is for --driver oci");
        assertThatThrownBy(() -> BenchOptions.parse(
                        new String[] {"--agent-jar", jar, "--driver", "raw_exec", "--registry-ca-file", ca.toString()}))
                .isInstanceOf(Bench.UsageException.class)
                .hasMessage("--registry-ca-file is for --driver oci");
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {
                    "--agent-jar", jar, "--driver", "oci", "--image", "busybox:1", "--registry-ca-file", "no\tca.pem"
                }))
                .isInstanceOf(Bench.UsageException.class)
                .hasMessage("--registry-ca-file names no file: \"no\\u0009ca.pem\"");
    }

    @Test
    void aFlagTheBenchCannotUseIsAUsageError() throws Exception {
        String jar = Files.createFile(dir.resolve("agent.jar")).toString();
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--allocs", "0", "--agent-jar", jar}))
                .isInstanceOf(Bench.UsageException.class)
                .hasMessage("--allocs needs a positive whole number");
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--tasks", "99999999999", "--agent-jar", jar}))
                .isInstanceOf(Bench.UsageException.class)
                .hasMessage("--tasks needs a positive whole number");
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--agent-jar", jar, "--allocs"}))
                .isInstanceOf(Bench.UsageException.class)
                .hasMessage("--allocs needs a value (--allocs N)");
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--alocs", "5"}))
                .isInstanceOf(Bench.UsageException.class)
                .hasMessage("unknown flag \"--alocs\"");
        assertThatThrownBy(() -> BenchOptions.parse(
                        new String[] {"--agent-jar", dir.resolve("none.jar").toString()}))
                .isInstanceOf(Bench.UsageException.class)
                .hasMessageStartingWith("no agent jar at ");
    }

    @Test
    void percentilesComeFromTheSortedFigures() {
        List<Double> sorted = List.of(1.0, 2.0, 3.0, 4.0);
        assertThat(Timeline.percentile(sorted, 0.50)).isEqualTo(2.0);
        assertThat(Timeline.percentile(sorted, 0.99)).isEqualTo(4.0);
        assertThat(Timeline.percentile(List.of(), 0.5)).isZero();
    }

    @Test
    void kubeVersionChoosesTheApiServersVersionAndIsCheckedAsTheServerChecksIt() throws Exception {
        String jar = Files.createFile(dir.resolve("agent.jar")).toString();

        assertThat(BenchOptions.parse(new String[] {"--agent-jar", jar, "--kube-version", "1.30"})
                        .kubeVersion())
                .isEqualTo("1.30");
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--agent-jar", jar, "--kube-version", "1.99"}))
                .isInstanceOf(Bench.UsageException.class)
                .hasMessage("--kube-version: Kubernetes 1.99 is not one this server acts as: 1.25 to 1.36");
        assertThatThrownBy(() -> BenchOptions.parse(
                        new String[] {"--agent-jar", jar, "--kube-version", "1.36", "--node-sharing", "resize"}))
                .isInstanceOf(Bench.UsageException.class)
                .hasMessage("--kube-version does not go with --node-sharing, which runs its own (1.35 for resize,"
                        + " 1.32 for dedicated)");
    }
}
