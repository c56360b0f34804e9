package dev.drover.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.drover.local.AgentIdentity;
import dev.drover.local.LocalApiServer;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code nodeSharing: resize} end to end, against the local API server acting as Kubernetes 1.35 with its kubelet
 * stand-in on a 4-CPU node: the agent runs as its DaemonSet Pod (the chart's, with the {@code reservation} container)
 * on the Pod-bound token and the chart's RBAC and node confinement, and books what it admits on that container. A Pod
 * of 2950m is already bound to the node; the agent's own container requests 50m, so 1000m are left.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PodReservationIT {

    private static final String ADMITTED = ".status.conditions[?(@.type==\"Admitted\")]";
    private static final String RESERVATION = "{.spec.containers[?(@.name==\"reservation\")].resources.requests.cpu}";

    @TempDir
    static Path dir;

    static LocalApiServer server;
    static Kubectl kubectl;
    static AgentProcess agent;
    static AgentIdentity.AgentPod pod;
    static int metricsPort;

    @BeforeAll
    static void start() throws Exception {
        server = LocalApiServer.start(LocalApiServer.Options.defaults()
                .withNodes(List.of("local"))
                .withKubeconfig(dir.resolve("kubeconfig"))
                .withKubeVersion("1.35")
                .withNodeAllocatable("cpu=4,memory=8Gi"));
        kubectl = new Kubectl(server.kubeconfig());
        kubectl.runWithInput(DedicatedNodeIT.pod("busy", "local", "2950m"), "apply", "-f", "-")
                .assertOk();
        Path kubeconfig = AgentKubeconfig.forNode(server, "local", dir);
        pod = AgentIdentity.install(server, AgentKubeconfig.CHART).agentPod("local");
        metricsPort = AgentIT.freePort();
        agent = new AgentProcess(
                Files.createDirectories(Path.of("target", "agent-logs")).resolve("pod-reservation-it.log"),
                "--kubeconfig",
                kubeconfig.toString(),
                "--node",
                "local",
                "--pod-name",
                pod.name(),
                "--pod-namespace",
                pod.namespace(),
                "--allocatable-cpu-millis",
                "8000", // the kubelet decides, not the machine this runs on
                "--data-dir",
                dir.resolve("data").toString(),
                "--metrics-port",
                Integer.toString(metricsPort),
                "--api-port",
                "-1");
        agent.start();
    }

    @AfterAll
    static void stop() throws Exception {
        if (agent != null) {
            kubectl.run("delete", "alloc", "--all", "--timeout=60s");
            agent.close();
        }
        if (server != null) {
            server.close();
        }
    }

    /** The reservation container's cpu request, in millicores. */
    static long reservedMillis() {
        String cpu = kubectl.run("get", "pod", "-n", pod.namespace(), pod.name(), "-o", "jsonpath=" + RESERVATION)
                .assertOk()
                .out()
                .strip();
        return cpu.endsWith("m")
                ? Long.parseLong(cpu.substring(0, cpu.length() - 1))
                : new BigDecimal(cpu).movePointRight(3).longValueExact();
    }

    /** {@code drover_reservation_resizes_total}, every outcome together. */
    static long resizes() throws Exception {
        Matcher m = Pattern.compile("(?m)^drover_reservation_resizes_total\\{[^}]*} ([0-9.eE+]+)$")
                .matcher(AgentProcess.metrics(metricsPort));
        long sum = 0;
        while (m.find()) {
            sum += (long) Double.parseDouble(m.group(1));
        }
        return sum;
    }

    @Test
    @Order(1)
    void anAllocationTheKubeletDefersIsRefusedInItsWordsAndOneThatFitsIsBookedOnTheAgentsPod() throws Exception {
        assertThat(agent.log()).contains("nodeSharing resize");
        kubectl.runWithInput(DedicatedNodeIT.alloc("two", 2000), "apply", "-f", "-")
                .assertOk();
        kubectl.waitForClientStatus("two", "Failed", Duration.ofSeconds(60));
        assertThat(kubectl.allocJsonpath("two", ADMITTED + ".reason")).isEqualTo("OutOfcpu");
        assertThat(kubectl.allocJsonpath("two", ADMITTED + ".message"))
                .contains("Deferred")
                .as("the agent's Pod asks 2050m (its agent container 50m) beside the other Pod's 2950m")
                .contains("Node didn't have enough resource: cpu, requested: 2050, used: 2950, capacity: 4000");
        await().atMost(Duration.ofSeconds(20)).until(() -> reservedMillis() == 0); // the refused resize is taken back

        kubectl.runWithInput(DedicatedNodeIT.alloc("one", 1000), "apply", "-f", "-")
                .assertOk();
        kubectl.waitForClientStatus("one", "Running", Duration.ofSeconds(60));
        assertThat(reservedMillis()).isEqualTo(1000);
        assertThat(kubectl.run(
                                "get",
                                "pod",
                                "-n",
                                pod.namespace(),
                                pod.name(),
                                "-o",
                                "jsonpath={.status.containerStatuses[?(@.name==\"reservation\")].allocatedResources.cpu}")
                        .out())
                .as("the kubelet allocated it")
                .isIn("1", "1000m");
    }

    @Test
    @Order(2)
    void anEndedAllocationShrinksTheReservation() {
        kubectl.run("delete", "alloc", "one", "--timeout=60s").assertOk();

        await().atMost(Duration.ofSeconds(30)).until(() -> reservedMillis() == 0);
    }

    @Test
    @Order(3)
    void aBurstOf200AllocationsCostsAFewResizes() throws Exception {
        long before = resizes();
        String burst = IntStream.range(0, 200)
                .mapToObj(i -> DedicatedNodeIT.alloc("burst-" + i, 4))
                .collect(Collectors.joining("---\n"));

        kubectl.runWithInput(burst, "apply", "-f", "-").assertOk();
        await().atMost(Duration.ofSeconds(120))
                .until(() -> kubectl.run(
                                        "get",
                                        "alloc",
                                        "-o",
                                        "jsonpath={range .items[*]}{.status.clientStatus}{\"\\n\"}{end}")
                                .out()
                                .lines()
                                .filter("Running"::equals)
                                .count()
                        == 200);

        assertThat(reservedMillis()).isEqualTo(800);
        long used = resizes() - before;
        System.out.println("200 allocations admitted with " + used + " resizes");
        assertThat(used).as("resizes for 200 allocations").isBetween(1L, 20L);
    }

    @Test
    @Order(4)
    void aRestartedAgentFindsItsReservationAndAdmitsNothingAgain() throws Exception {
        String admittedAt = kubectl.allocJsonpath("burst-7", ADMITTED + ".lastTransitionTime");
        agent.stop();

        agent.start();

        assertThat(reservedMillis()).isEqualTo(800);
        assertThat(kubectl.allocJsonpath("burst-7", ADMITTED + ".lastTransitionTime"))
                .as("not admitted again")
                .isEqualTo(admittedAt);
        assertThat(resizes())
                .as("nothing to resize: the Pod holds what the store holds")
                .isZero();
        kubectl.runWithInput(DedicatedNodeIT.alloc("after", 100), "apply", "-f", "-")
                .assertOk();
        kubectl.waitForClientStatus("after", "Running", Duration.ofSeconds(60));
        assertThat(reservedMillis()).isEqualTo(900);
    }
}
