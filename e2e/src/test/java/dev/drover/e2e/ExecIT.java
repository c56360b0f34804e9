package dev.drover.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.abort;

import dev.drover.cgroups.Cgroup;
import dev.drover.cgroups.CgroupParent;
import dev.drover.cgroups.Cgroups;
import dev.drover.local.LocalApiServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 20's acceptance for the exec driver, on the real kernel and as root: the agent jar for node {@code local}
 * with exec enabled, its task cgroups below this test's own cgroup (removed after), its data dir below target/
 * (each exec task has a /tmp of its own, so the data dir is not there). Skipped where cgroups cannot be made.
 */
class ExecIT {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final List<String> TASKS =
            List.of("default_exec_owner", "default_exec_thief", "default_confined-check_owner");

    @TempDir
    static Path dir;

    static LocalApiServer server;
    static Kubectl kubectl;
    static AgentProcess agent;
    static Path data;
    static Cgroups cgroups;
    static CgroupParent parent;

    @BeforeAll
    static void start() throws Exception {
        String name = "drover-it-" + UUID.randomUUID().toString().substring(0, 8);
        try {
            cgroups = Cgroups.detect();
            Cgroup made = cgroups.create(CgroupParent.own(), name);
            made.remove(TIMEOUT); // it could be made: the agent makes it again
        } catch (IOException e) {
            abort("cannot make cgroups below this process's own: " + e.getMessage());
        }
        parent = CgroupParent.own().child(name);
        server = LocalApiServer.start(LocalApiServer.Options.defaults()
                .withNodes(List.of("local"))
                .withKubeconfig(dir.resolve("kubeconfig")));
        kubectl = new Kubectl(server.kubeconfig());
        data = Files.createTempDirectory(dataBase(), "exec-it");
        agent = new AgentProcess(
                        Files.createDirectories(Path.of("target", "agent-logs")).resolve("exec-it.log"),
                        "--kubeconfig",
                        AgentKubeconfig.forNode(server, "local", dir).toString(),
                        "--node",
                        "local",
                        "--data-dir",
                        data.toString(),
                        "--enable-exec",
                        "--cgroup-parent",
                        name,
                        "--metrics-port",
                        "-1",
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
        if (parent != null) {
            for (String task : TASKS) {
                Optional<Cgroup> left = cgroups.find(parent, task);
                if (left.isPresent()) {
                    left.get().killAll(TIMEOUT); // only these tests' tasks ever entered it
                    left.get().remove(TIMEOUT);
                }
            }
            Optional<Cgroup> made =
                    cgroups.find(CgroupParent.own(), parent.segments().getLast());
            if (made.isPresent()) {
                made.get().remove(TIMEOUT);
            }
        }
        if (data != null) {
            try (Stream<Path> tree = Files.walk(data)) {
                for (Path p : tree.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    @Test
    void anExecTaskIsPidOnesChildAsNobodyAndAnotherUsersTaskCannotReadItsSecrets() throws Exception {
        kubectl.runWithInput("""
                        apiVersion: drover.dev/v1alpha1
                        kind: Allocation
                        metadata: {name: exec, namespace: default}
                        spec:
                          nodeName: local
                          type: Batch
                          restartPolicy: {attempts: 0, interval: 1m, delay: 1s, mode: Fail}
                          tasks:
                          - name: owner
                            driver: exec
                            lifecycle: {hook: Prestart}
                            config:
                              command: /bin/sh
                              args:
                              - -c
                              - echo "ppid=$PPID uid=$(id -u)"; echo s3cret > "$DROVER_SECRETS_DIR/token"
                          - name: thief
                            driver: exec
                            user: daemon
                            config:
                              command: /bin/sh
                              args:
                              - -c
                              - id -un; cat "$DROVER_ALLOC_DIR/../owner/secrets/token" || echo refused
                        """, "apply", "-f", "-").assertOk();
        kubectl.waitForClientStatus("exec", "Complete", TIMEOUT);

        Path logs = data.resolve("allocs/default/exec/alloc/logs");
        assertThat(Files.readString(logs.resolve("owner.stdout.0"))).isEqualTo("ppid=1 uid=65534\n");
        assertThat(Files.readString(data.resolve("allocs/default/exec/owner/secrets/token")))
                .isEqualTo("s3cret\n");
        assertThat(Files.readString(logs.resolve("thief.stdout.0"))).isEqualTo("daemon\nrefused\n");
        assertThat(Files.readString(logs.resolve("thief.stderr.0"))).contains("Permission denied");
        kubectl.run("delete", "alloc", "exec", "--timeout=30s").assertOk();
    }

    /**
     * An exec check runs inside the exec task's confinement: as its user, in its PID namespace (a handful of
     * processes, the task's sleep among them) and its cgroup, with its environment.
     */
    @Test
    void anExecChecksCommandRunsInsideTheTasksNamespacesAsItsUser() throws Exception {
        kubectl.runWithInput("""
                        apiVersion: drover.dev/v1alpha1
                        kind: Allocation
                        metadata: {name: confined-check, namespace: default}
                        spec:
                          nodeName: local
                          tasks:
                          - name: owner
                            driver: exec
                            env: [{name: MARK, value: inside}]
                            config: {command: /bin/sleep, args: ["3600"]}
                            checks:
                            - name: confined
                              type: exec
                              command: /bin/sh
                              args:
                              - -c
                              - >-
                                [ "$(id -un)" = nobody ] && [ "$MARK" = inside ]
                                && grep -qx sleep /proc/[0-9]*/comm && [ "$(ls /proc | grep -c '^[0-9]')" -lt 10 ]
                                && grep -q default_confined-check_owner /proc/self/cgroup
                                && echo confined || { echo escaped; exit 2; }
                              interval: 1s
                              timeout: 1s
                        """, "apply", "-f", "-").assertOk();
        await().atMost(TIMEOUT).untilAsserted(() -> {
            var a = server.client()
                    .resources(dev.drover.api.v1alpha1.Allocation.class)
                    .inNamespace("default")
                    .withName("confined-check")
                    .get();
            assertThat(a.getStatus()).isNotNull();
            assertThat(a.getStatus().getTaskStates().get("owner")).isNotNull();
            assertThat(a.getStatus().getTaskStates().get("owner").getChecks())
                    .as(io.fabric8.kubernetes.client.utils.Serialization.asYaml(
                            a.getStatus().getTaskStates()))
                    .singleElement()
                    .satisfies(c -> {
                        assertThat(c.getStatus()).isEqualTo(dev.drover.api.v1alpha1.CheckStatus.Status.PASSING);
                        assertThat(c.getOutput()).isEqualTo("confined");
                    });
        });
        kubectl.run("delete", "alloc", "confined-check", "--timeout=30s").assertOk();
    }

    /**
     * Where the test's data dir goes: the module's target/, unless the checkout itself is below /tmp (a clean
     * clone often is), which each exec task gets a private one of; /var/tmp then.
     */
    static Path dataBase() throws java.io.IOException {
        Path target = Files.createDirectories(Path.of("target")).toAbsolutePath();
        return target.startsWith("/tmp") ? Path.of("/var/tmp") : target;
    }
}
