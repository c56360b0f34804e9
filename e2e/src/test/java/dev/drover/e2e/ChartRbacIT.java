package dev.drover.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.drover.local.AgentIdentity;
import dev.drover.local.LocalApiServer;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The chart's RBAC is what an e2e agent lives by ({@link AgentKubeconfig}): take one rule out of the chart's
 * ClusterRole and the agent fails where a user sees it, as it would on a real cluster.
 */
class ChartRbacIT {

    @TempDir
    Path dir;

    LocalApiServer server;
    AgentProcess agent;

    @AfterEach
    void stop() throws Exception {
        if (agent != null) {
            agent.close();
        }
        if (server != null) {
            server.close();
        }
    }

    /** Starts a server, applies the chart's RBAC less the rules {@code dropped} matches, and returns the agent. */
    AgentProcess agentWithout(String log, Predicate<PolicyRule> dropped, String... extra) throws Exception {
        server = LocalApiServer.start(LocalApiServer.Options.defaults()
                .withNodes(List.of("local"))
                .withKubeconfig(dir.resolve("kubeconfig")));
        Path kubeconfig = AgentKubeconfig.forNode(server, "local", dir);
        ClusterRole role = server.client()
                .rbac()
                .clusterRoles()
                .withName(AgentIdentity.RELEASE)
                .get();
        List<PolicyRule> kept =
                role.getRules().stream().filter(dropped.negate()).toList();
        assertThat(kept).as("a rule was dropped").hasSize(role.getRules().size() - 1);
        role.setRules(kept);
        server.client().resource(role).update();
        List<String> args = new java.util.ArrayList<>(List.of(
                "--kubeconfig",
                kubeconfig.toString(),
                "--node",
                "local",
                "--data-dir",
                dir.resolve("data").toString(),
                "--api-port",
                "-1"));
        args.addAll(List.of(extra));
        return new AgentProcess(
                Files.createDirectories(Path.of("target", "agent-logs")).resolve(log), args.toArray(String[]::new));
    }

    static boolean names(PolicyRule rule, String resource) {
        return rule.getResources().contains(resource);
    }

    @Test
    void anAgentThatMayNotWriteAllocationStatusSaysForbiddenAndCountsTheFailedWrites() throws Exception {
        int metricsPort;
        try (ServerSocket s = new ServerSocket(0)) {
            metricsPort = s.getLocalPort();
        }
        agent = agentWithout(
                        "chart-rbac-it-status.log",
                        rule -> names(rule, "allocations/status"),
                        "--metrics-port",
                        Integer.toString(metricsPort))
                .start();
        Kubectl kubectl = new Kubectl(server.kubeconfig());
        kubectl.runWithInput("""
                        apiVersion: drover.dev/v1alpha1
                        kind: Allocation
                        metadata: {name: muted, namespace: default}
                        spec:
                          nodeName: local
                          tasks:
                          - {name: main, driver: mock, config: {runFor: 10m}}
                        """, "apply", "-f", "-").assertOk();
        String metricsUrl = "http://127.0.0.1:" + metricsPort + "/metrics";
        try (HttpClient http = HttpClient.newHttpClient()) {
            await().atMost(Duration.ofSeconds(30))
                    .untilAsserted(() -> assertThat(http.send(
                                            HttpRequest.newBuilder(URI.create(metricsUrl))
                                                    .build(),
                                            HttpResponse.BodyHandlers.ofString())
                                    .body())
                            .containsPattern("(?m)^drover_status_writes_total\\{result=\"failed\",} [1-9]"));
        }
        assertThat(agent.log())
                .contains("allocations.drover.dev \"muted\" is forbidden: User "
                        + "\"system:serviceaccount:drover-system:drover\" cannot patch resource \"allocations/status\""
                        + " in API group \"drover.dev\" in the namespace \"default\"");
        assertThat(kubectl.run("get", "alloc", "muted", "-o", "jsonpath={.status.clientStatus}")
                        .assertOk()
                        .out())
                .as("no status reaches the API server")
                .isEmpty();
    }
}
