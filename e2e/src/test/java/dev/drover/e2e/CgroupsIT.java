package dev.drover.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.abort;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.drover.cgroups.Cgroup;
import dev.drover.cgroups.CgroupParent;
import dev.drover.cgroups.Cgroups;
import dev.drover.e2e.chart.Promtool;
import dev.drover.local.LocalApiServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 20's acceptance for raw_exec in cgroups, on the real kernel: the agent jar for node {@code local}, its task
 * cgroups under a parent made below this test's own cgroup (the agent is its child, in the same cgroups) and
 * removed after. Skipped where cgroups cannot be made here. Only processes these tests started are ended.
 */
class CgroupsIT {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @TempDir
    static Path dir;

    static LocalApiServer server;
    static Kubectl kubectl;
    static AgentProcess agent;
    static Path data;
    static Cgroups cgroups;
    static CgroupParent parent;
    static int metricsPort;
    static final List<Long> pids = new ArrayList<>();

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
        data = dir.resolve("data");
        metricsPort = AgentIT.freePort();
        agent = new AgentProcess(
                        Files.createDirectories(Path.of("target", "agent-logs")).resolve("cgroups-it.log"),
                        "--kubeconfig",
                        AgentKubeconfig.forNode(server, "local", dir).toString(),
                        "--node",
                        "local",
                        "--data-dir",
                        data.toString(),
                        "--enable-raw-exec",
                        "--cgroup-parent",
                        name,
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
        for (long pid : pids) {
            ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        }
        if (server != null) {
            server.close();
        }
        if (parent != null) {
            for (String task : List.of(
                    "default_oom_main",
                    "default_daemon_main",
                    "default_exits_main",
                    "default_interrupted_main",
                    "default_used_main")) {
                Optional<Cgroup> left = cgroups.find(parent, task);
                if (left.isPresent()) {
                    left.get().killAll(TIMEOUT); // only these tests' tasks ever entered it
                    left.get().remove(TIMEOUT);
                }
            }
            cgroups.find(CgroupParent.own(), parent.segments().getLast()).ifPresent(c -> removeQuietly(c));
        }
    }

    private static void removeQuietly(Cgroup c) {
        try {
            c.remove(TIMEOUT);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static String rawExec(String name, String spec, String script, String resources) {
        return """
                apiVersion: drover.dev/v1alpha1
                kind: Allocation
                metadata: {name: %s, namespace: default}
                spec:
                  nodeName: local
                %s  tasks:
                  - name: main
                    driver: raw_exec
                    config: {command: /bin/sh, args: ["-c", "%s"]}
                    killTimeout: 2s
                    resources: %s
                """.formatted(name, spec, script, resources);
    }

    @Test
    void aTaskPastItsMemoryLimitIsReportedOomKilled() {
        kubectl.runWithInput(
                        rawExec(
                                "oom",
                                "  type: Batch\n  restartPolicy: {attempts: 0, interval: 1m, delay: 1s, mode: Fail}\n",
                                "head -c 200M /dev/zero | tail",
                                "{memoryMB: 64}"),
                        "apply",
                        "-f",
                        "-")
                .assertOk();
        kubectl.waitForClientStatus("oom", "Failed", TIMEOUT);

        String types = kubectl.allocJsonpath("oom", ".status.taskStates.main.events[*].type");
        assertThat(types).contains("Terminated");
        assertThat(kubectl.allocJsonpath("oom", ".status.taskStates.main.events[?(@.type==\"Terminated\")].oomKilled"))
                .isEqualTo("true");
        assertThat(kubectl.allocJsonpath("oom", ".status.taskStates.main.events[?(@.type==\"Terminated\")].message"))
                .startsWith("OOM Killed");
        kubectl.run("delete", "alloc", "oom", "--timeout=30s").assertOk();
    }

    @Test
    void aDaemonThatLeftTheTasksSessionIsGoneAfterTheAllocationIsDeleted() throws Exception {
        kubectl.runWithInput(
                        rawExec("daemon", "", "setsid sh -c 'sleep 300 & echo $! > daemon'; sleep 300", "{}"),
                        "apply",
                        "-f",
                        "-")
                .assertOk();
        kubectl.waitForClientStatus("daemon", "Running", TIMEOUT);
        Path pidFile = data.resolve("allocs/default/daemon/main/daemon");
        await().atMost(TIMEOUT)
                .until(() -> Files.exists(pidFile) && !Files.readString(pidFile).isBlank());
        long daemon = Long.parseLong(Files.readString(pidFile).strip());
        pids.add(daemon);
        assertThat(isGone(daemon)).isFalse();
        Path taskPid = data.resolve("allocs/default/daemon/main/.drover-raw-exec/pid");
        long task = Long.parseLong(Files.readString(taskPid).strip().split(" ")[0]);
        pids.add(task);
        assertThat(sessionOf(daemon)).as("the daemon left the task's session").isNotEqualTo(sessionOf(task));

        kubectl.run("delete", "alloc", "daemon", "--timeout=30s").assertOk();

        await().atMost(Duration.ofSeconds(10)).until(() -> isGone(daemon));
        assertThat(cgroups.find(parent, "default_daemon_main"))
                .as("its cgroup removed")
                .isEmpty();
    }

    /**
     * Exit 130 and death by SIGINT are told apart in the Terminated event (a shell would report both as 130): the
     * agent runs its tasks under its monitor, which reads how the task ended from the kernel.
     */
    @Test
    void exit130AndSigintAreToldApart() {
        String batch = "  type: Batch\n  restartPolicy: {attempts: 0, interval: 1m, delay: 1s, mode: Fail}\n";
        kubectl.runWithInput(rawExec("exits", batch, "exit 130", "{}"), "apply", "-f", "-")
                .assertOk();
        kubectl.runWithInput(rawExec("interrupted", batch, "kill -INT $$; sleep 5", "{}"), "apply", "-f", "-")
                .assertOk();
        kubectl.waitForClientStatus("exits", "Failed", TIMEOUT);
        kubectl.waitForClientStatus("interrupted", "Failed", TIMEOUT);

        String terminated = ".status.taskStates.main.events[?(@.type==\"Terminated\")]";
        assertThat(kubectl.allocJsonpath("exits", terminated + ".exitCode")).isEqualTo("130");
        assertThat(kubectl.allocJsonpath("exits", terminated + ".signal"))
                .as("no signal: it exited")
                .isEmpty();
        assertThat(kubectl.allocJsonpath("interrupted", terminated + ".signal")).isEqualTo("SIGINT");
        kubectl.run("delete", "alloc", "exits", "interrupted", "--timeout=30s").assertOk();
    }

    /**
     * Issue 41's acceptance: a scrape taken while a raw_exec task runs has its CPU, working set and memory limit,
     * read from its cgroup and labelled with its allocation, and passes {@code promtool check metrics}; once the
     * allocation is deleted, a scrape has none of its series.
     */
    @Test
    void aRunningRawExecTasksUsageIsScrapedFromItsCgroupAndGoesWithIt() throws Exception {
        kubectl.runWithInput(
                        rawExec("used", "", "head -c 8M /dev/zero > /dev/null; exec sleep 300", "{memoryMB: 64}"),
                        "apply",
                        "-f",
                        "-")
                .assertOk();
        kubectl.waitForClientStatus("used", "Running", TIMEOUT);
        String labels = "{namespace=\"default\",allocation=\"used\",task=\"main\",}";
        await().atMost(TIMEOUT).until(() -> metrics().contains("drover_task_cpu_seconds_total" + labels));

        String scrape = metrics();
        assertThat(AgentIT.value(scrape, Pattern.quote("drover_task_cpu_seconds_total" + labels)))
                .isPositive();
        assertThat(AgentIT.value(scrape, Pattern.quote("drover_task_memory_working_set_bytes" + labels)))
                .isPositive()
                .isLessThan(64 << 20);
        assertThat(AgentIT.value(scrape, Pattern.quote("drover_task_memory_limit_bytes" + labels)))
                .isEqualTo(64 << 20);
        Optional<Promtool> promtool = Promtool.find();
        assumeTrue(promtool.isPresent(), Promtool.HOW);
        Promtool.Result check = promtool.get().checkMetrics(dir, scrape);
        assertThat(check.exitCode()).as(check.output()).isZero();

        kubectl.run("delete", "alloc", "used", "--timeout=30s").assertOk();
        await().atMost(TIMEOUT).until(() -> !metrics().contains("allocation=\"used\""));
        assertThat(metrics()).contains("# TYPE drover_task_cpu_seconds_total counter");
    }

    private static String metrics() throws Exception {
        return AgentProcess.metrics(metricsPort);
    }

    /** Field 6 of /proc/PID/stat, the session. */
    private static String sessionOf(long pid) throws IOException {
        String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
        return stat.substring(stat.lastIndexOf(')') + 2).split(" ")[3];
    }

    /** No such process, or only its zombie left for its new parent to reap. */
    private static boolean isGone(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            return stat.substring(stat.lastIndexOf(')') + 2).startsWith("Z");
        } catch (IOException e) {
            return true;
        }
    }
}
