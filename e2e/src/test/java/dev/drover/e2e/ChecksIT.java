package dev.drover.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.CheckStatus;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.api.v1alpha1.TaskState;
import dev.drover.local.LocalApiServer;
import io.fabric8.kubernetes.api.model.Condition;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 22's acceptance for health checks, on the local cluster with the agent jar: a raw_exec task serving HTTP
 * (a single-file Java program) is Ready once its http, tcp or exec check passes; made to fail, the check turns
 * critical, Ready turns False, and {@code checkRestart} restarts the task with a {@code Restarting} event naming the
 * check, after which it is Ready again.
 */
class ChecksIT {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    @TempDir
    static Path dir;

    static LocalApiServer server;
    static Kubectl kubectl;
    static AgentProcess agent;
    static Path program;
    static int metricsPort;

    @BeforeAll
    static void start() throws Exception {
        server = LocalApiServer.start(LocalApiServer.Options.defaults()
                .withNodes(List.of("local"))
                .withKubeconfig(dir.resolve("kubeconfig")));
        kubectl = new Kubectl(server.kubeconfig());
        program = dir.resolve("HealthServer.java.txt");
        try (InputStream in = ChecksIT.class.getResourceAsStream("/checks/HealthServer.java.txt")) {
            Files.copy(in, program);
        }
        metricsPort = AgentIT.freePort();
        agent = new AgentProcess(
                        Files.createDirectories(Path.of("target", "agent-logs")).resolve("checks-it.log"),
                        "--kubeconfig",
                        AgentKubeconfig.forNode(server, "local", dir).toString(),
                        "--node",
                        "local",
                        "--data-dir",
                        dir.resolve("data").toString(),
                        "--enable-raw-exec",
                        "--metrics-port",
                        Integer.toString(metricsPort),
                        "--api-port",
                        "-1")
                .start();
    }

    @AfterAll
    static void stop() throws Exception {
        if (agent != null) {
            agent.close();
        }
        if (server != null) {
            server.close();
        }
    }

    /** An allocation of one raw_exec task running the health server in {@code mode}, with {@code check}. */
    static String allocation(String name, String mode, int port, Path fail, String check) {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        return """
                apiVersion: drover.dev/v1alpha1
                kind: Allocation
                metadata: {name: %s, namespace: default}
                spec:
                  nodeName: local
                  tasks:
                  - name: web
                    driver: raw_exec
                    config: {command: %s, args: ["--source", "25", "%s", "%s", "%d", "%s"]}
                    killTimeout: 2s
                    restartPolicy: {attempts: 3, interval: 10m, delay: 1s, mode: Fail}
                    checks:
                    - %s
                    checkRestart: {limit: 2, grace: 20s}
                """.formatted(name, java, program, mode, port, fail, check);
    }

    static Allocation get(String name) {
        return server.client()
                .resources(Allocation.class)
                .inNamespace("default")
                .withName(name)
                .get();
    }

    static Optional<Condition> condition(Allocation a, String type) {
        return a.getStatus() == null
                ? Optional.empty()
                : a.getStatus().getConditions().stream()
                        .filter(c -> type.equals(c.getType()))
                        .findFirst();
    }

    static TaskState web(Allocation a) {
        return a.getStatus().getTaskStates().get("web");
    }

    static void awaitReady(String name, String check, int restarts) {
        await().atMost(TIMEOUT).untilAsserted(() -> {
            Allocation a = get(name);
            assertThat(condition(a, "Ready"))
                    .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("True"));
            assertThat(condition(a, "Healthy")).hasValueSatisfying(c -> {
                assertThat(c.getStatus()).isEqualTo("True");
                assertThat(c.getReason()).isEqualTo("ChecksPassing");
            });
            assertThat(web(a).getChecks()).singleElement().satisfies(c -> {
                assertThat(c.getName()).isEqualTo(check);
                assertThat(c.getStatus()).isEqualTo(CheckStatus.Status.PASSING);
            });
            assertThat(web(a).getRestarts()).isEqualTo(restarts);
        });
    }

    /**
     * Makes the check fail with {@code fail} until the task restarts: critical with {@code output}, Ready False for
     * it, a {@code Restarting} event naming it, then healthy again after the restart.
     */
    static void failUntilRestarted(String name, String check, Path fail, String output) throws Exception {
        Files.writeString(fail, "x");
        await().atMost(TIMEOUT).untilAsserted(() -> {
            Allocation a = get(name);
            assertThat(web(a).getEvents())
                    .as("the checkRestart's Restarting event names the check")
                    .filteredOn(e -> e.getType() == TaskEventType.Restarting)
                    .anySatisfy(e -> assertThat(e.getMessage()).contains(check));
        });
        Files.delete(fail);
        Allocation restarted = get(name);
        assertThat(web(restarted).getEvents())
                .as("the check was seen critical first")
                .filteredOn(e -> e.getType() == TaskEventType.CheckStatusChanged)
                .anySatisfy(e -> {
                    assertThat(e.getCheck()).isEqualTo(check);
                    assertThat(e.getCheckStatus()).isEqualTo(CheckStatus.Status.CRITICAL);
                    assertThat(e.getMessage()).contains(output);
                });
        assertThat(server.client().v1().events().inNamespace("default").list().getItems())
                .as("Kubernetes Events: the critical check as a Warning, and Ready False while it was")
                .anySatisfy(e -> {
                    assertThat(e.getInvolvedObject().getName()).isEqualTo(name);
                    assertThat(e.getType()).isEqualTo("Warning");
                    assertThat(e.getMessage()).contains(check).contains("critical");
                });
        awaitReady(name, check, 1);
        assertThat(web(get(name)).getFailed()).isFalse();
        kubectl.run("delete", "alloc", name, "--timeout=30s").assertOk();
    }

    @Test
    void anHttpCheckGatesReadyAndA503RestartsTheTaskNamingTheCheck() throws Exception {
        int port = AgentIT.freePort();
        Path fail = dir.resolve("http-fail");
        kubectl.runWithInput(
                        allocation(
                                "checked-http",
                                "http",
                                port,
                                fail,
                                "{name: web-http, type: http, port: %d, path: /healthz, interval: 1s, timeout: 1s,"
                                                .formatted(port)
                                        + " failureThreshold: 2}"),
                        "apply",
                        "-f",
                        "-")
                .assertOk();
        awaitReady("checked-http", "web-http", 0);
        String metrics = metrics();
        assertThat(metrics)
                .containsPattern("drover_check_status\\{[^}]*allocation=\"checked-http\"[^}]*check=\"web-http\""
                        + "[^}]*status=\"passing\"[^}]*\\} 1\\.0");

        Files.writeString(fail, "x");
        await().atMost(TIMEOUT).untilAsserted(() -> {
            Allocation a = get("checked-http");
            assertThat(condition(a, "Ready")).hasValueSatisfying(c -> {
                assertThat(c.getStatus()).isEqualTo("False");
                assertThat(c.getReason()).isEqualTo("Unhealthy");
            });
            assertThat(condition(a, "Healthy")).hasValueSatisfying(c -> {
                assertThat(c.getReason()).isEqualTo("CheckCritical");
                assertThat(c.getMessage()).contains("web-http").contains("HTTP 503");
            });
        });
        failUntilRestarted("checked-http", "web-http", fail, "HTTP 503");
    }

    @Test
    void aTcpCheckRefusedRestartsTheTaskNamingTheCheck() throws Exception {
        int port = AgentIT.freePort();
        Path fail = dir.resolve("tcp-fail");
        kubectl.runWithInput(
                        allocation(
                                "checked-tcp",
                                "tcp",
                                port,
                                fail,
                                "{name: web-tcp, type: tcp, port: %d, interval: 1s, timeout: 1s}".formatted(port)),
                        "apply",
                        "-f",
                        "-")
                .assertOk();
        awaitReady("checked-tcp", "web-tcp", 0);
        failUntilRestarted("checked-tcp", "web-tcp", fail, "refused");
    }

    @Test
    void anExecCheckFailingRestartsTheTaskNamingTheCheck() throws Exception {
        int port = AgentIT.freePort();
        Path fail = dir.resolve("exec-fail");
        kubectl.runWithInput(
                        allocation(
                                "checked-exec",
                                "exec",
                                port,
                                dir.resolve("unused"),
                                "{name: web-exec, type: exec, command: /bin/sh, args: [\"-c\", \"if [ -e %s ]; then"
                                                .formatted(fail)
                                        + " echo broken; exit 2; fi; echo fine\"], interval: 1s, timeout: 1s}"),
                        "apply",
                        "-f",
                        "-")
                .assertOk();
        awaitReady("checked-exec", "web-exec", 0);
        failUntilRestarted("checked-exec", "web-exec", fail, "broken");
    }

    static String metrics() throws Exception {
        return AgentProcess.metrics(metricsPort);
    }
}
