package dev.drover.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.drover.local.LocalApiServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 10's migration acceptance: two agents, for nodes {@code a} and {@code b}, on the local cluster. What an
 * allocation wrote on a is there for its replacement on b, which the agent on b downloaded from the agent on a.
 */
class MigrationIT {

    @TempDir
    static Path dir;

    static LocalApiServer server;
    static Kubectl kubectl;
    static AgentProcess agentA;
    static AgentProcess agentB;

    @BeforeAll
    static void start() throws Exception {
        server = LocalApiServer.start(LocalApiServer.Options.defaults()
                .withNodes(List.of("a", "b"))
                .withKubeconfig(dir.resolve("kubeconfig")));
        kubectl = new Kubectl(server.kubeconfig());
        Path logs = Files.createDirectories(Path.of("target", "agent-logs"));
        agentA = agent("a", logs).start();
        agentB = agent("b", logs).start();
    }

    static AgentProcess agent(String node, Path logs) throws java.io.IOException {
        return new AgentProcess(
                logs.resolve("migration-it-" + node + ".log"),
                AgentKubeconfig.withGateway(
                        server,
                        dir,
                        "--kubeconfig",
                        AgentKubeconfig.forNode(server, node, dir).toString(),
                        "--peer-token-file",
                        AgentKubeconfig.peerToken(server, node, dir).toString(),
                        "--node",
                        node,
                        "--data-dir",
                        dir.resolve("data-" + node).toString(),
                        "--enable-raw-exec",
                        "--metrics-port",
                        "-1",
                        "--api-port",
                        "0"));
    }

    @AfterAll
    static void stop() throws Exception {
        List<ProcessHandle> tasks = new ArrayList<>();
        for (AgentProcess agent : new AgentProcess[] {agentA, agentB}) {
            if (agent != null) {
                tasks.addAll(agent.descendants());
                agent.close();
            }
        }
        // raw_exec tasks outlive their agent: end the ones these agents started, by their pids
        tasks.forEach(ProcessHandle::destroyForcibly);
        if (server != null) {
            server.close();
        }
    }

    static String alloc(String name, String node, String previous, String script) {
        return """
                apiVersion: drover.dev/v1alpha1
                kind: Allocation
                metadata: {name: %s, namespace: default}
                spec:
                  nodeName: %s
                %s  ephemeralDisk: {sizeMB: 10, migrate: true}
                  tasks:
                  - name: app
                    driver: raw_exec
                    config: {command: /bin/sh, args: ["-c", %s]}
                    killTimeout: 2s
                """.formatted(
                name, node, previous == null ? "" : "  previousAllocation: " + previous + "\n", "'" + script + "'");
    }

    static Path file(String node, String alloc, String path) {
        return dir.resolve("data-" + node).resolve("allocs/default/" + alloc + "/" + path);
    }

    @Test
    void aFileWrittenOnNodeAIsThereForTheReplacementOnNodeB() throws Exception {
        kubectl.runWithInput(
                        alloc(
                                "store-1",
                                "a",
                                null,
                                "echo written on a > \"$DROVER_ALLOC_DIR/data/greeting\";"
                                        + " echo 41 > \"$DROVER_TASK_DIR/local/counter\"; exec sleep 600"),
                        "apply",
                        "-f",
                        "-")
                .assertOk();
        kubectl.waitForClientStatus("store-1", "Running", Duration.ofSeconds(30));
        await().atMost(Duration.ofSeconds(10)).until(() -> Files.exists(file("a", "store-1", "app/local/counter")));
        kubectl.run("patch", "alloc", "store-1", "--type=merge", "-p", "{\"spec\":{\"desiredStatus\":\"Stop\"}}")
                .assertOk();

        kubectl.runWithInput(
                        alloc(
                                "store-2",
                                "b",
                                "store-1",
                                "cat \"$DROVER_ALLOC_DIR/data/greeting\""
                                        + " \"$DROVER_TASK_DIR/local/counter\" > \"$DROVER_TASK_DIR/local/seen\"; exec sleep 600"),
                        "apply",
                        "-f",
                        "-")
                .assertOk();
        kubectl.waitForClientStatus("store-2", "Running", Duration.ofSeconds(40));
        Path seen = file("b", "store-2", "app/local/seen");
        await().atMost(Duration.ofSeconds(10)).until(() -> Files.exists(seen) && Files.size(seen) > 0);
        assertThat(seen).hasContent("written on a\n41");
        assertThat(kubectl.allocJsonpath("store-2", ".status.taskStates.app.events[*].message"))
                .contains("Migrated the ephemeral disk of previous allocation store-1 from node a");
        assertThat(file("b", "store-2", ".snapshot")).doesNotExist();
        assertThat(file("a", "store-1", "alloc/data/greeting"))
                .as("the old node keeps its copy until it is deleted")
                .exists();
    }

    @Test
    void aDiskGoesToOneSuccessorOnlyAndASecondGetsAWarning() throws Exception {
        kubectl.runWithInput(
                        alloc(
                                "keep-1",
                                "a",
                                null,
                                "echo secret of keep-1 > \"$DROVER_ALLOC_DIR/data/note\";" + " exec sleep 600"),
                        "apply",
                        "-f",
                        "-")
                .assertOk();
        kubectl.waitForClientStatus("keep-1", "Running", Duration.ofSeconds(30));
        await().atMost(Duration.ofSeconds(10)).until(() -> Files.exists(file("a", "keep-1", "alloc/data/note")));
        kubectl.run("patch", "alloc", "keep-1", "--type=merge", "-p", "{\"spec\":{\"desiredStatus\":\"Stop\"}}")
                .assertOk();
        String copy = "cat \"$DROVER_ALLOC_DIR/data/note\" > \"$DROVER_TASK_DIR/local/seen\" 2>/dev/null;"
                + " echo started >> \"$DROVER_TASK_DIR/local/seen\"; exec sleep 600";
        kubectl.runWithInput(alloc("keep-2", "b", "keep-1", copy), "apply", "-f", "-")
                .assertOk();
        kubectl.waitForClientStatus("keep-2", "Running", Duration.ofSeconds(40));
        await().atMost(Duration.ofSeconds(10)).until(() -> Files.exists(file("b", "keep-2", "app/local/seen")));
        assertThat(file("b", "keep-2", "app/local/seen")).hasContent("secret of keep-1\nstarted");
        assertThat(Files.readString(file("a", "keep-1", ".disk-claim")))
                .as("claimed where the disk is, by node a's agent")
                .startsWith("keep-2/" + kubectl.allocJsonpath("keep-2", ".metadata.uid"));
        assertThat(kubectl.allocJsonpath("keep-1", ".metadata.annotations")).doesNotContain("claim");

        kubectl.runWithInput(alloc("keep-3", "b", "keep-1", copy), "apply", "-f", "-")
                .assertOk();
        kubectl.waitForClientStatus("keep-3", "Running", Duration.ofSeconds(40));
        await().atMost(Duration.ofSeconds(10)).until(() -> Files.exists(file("b", "keep-3", "app/local/seen")));
        assertThat(file("b", "keep-3", "app/local/seen"))
                .as("nothing of keep-1's disk")
                .hasContent("started");
        assertThat(kubectl.allocJsonpath("keep-3", ".status.taskStates.app.events[*].message"))
                .contains("Not taking the ephemeral disk of previous allocation keep-1; starting with an empty one:"
                        + " the agent of node a says \"allocation keep-2 claimed the disk of keep-1 first, and a disk"
                        + " goes to one successor only\"");
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(kubectl.run(
                                        "get",
                                        "events",
                                        "--field-selector",
                                        "involvedObject.name=keep-3,type=Warning",
                                        "-o",
                                        "jsonpath={.items[*].reason}")
                                .assertOk()
                                .out())
                        .contains("DiskAlreadyClaimed"));
    }

    @Test
    void aDiskThatCannotBeFetchedIsASoftFailure() {
        kubectl.runWithInput(alloc("orphan", "b", "never-was", "exec sleep 600"), "apply", "-f", "-")
                .assertOk();
        kubectl.waitForClientStatus("orphan", "Running", Duration.ofSeconds(40));
        assertThat(kubectl.allocJsonpath("orphan", ".status.taskStates.app.events[*].message"))
                .contains("Could not migrate the ephemeral disk of previous allocation never-was; starting with an"
                        + " empty one: previous allocation default/never-was is gone, and its disk with it");
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(kubectl.run(
                                        "get",
                                        "events",
                                        "--field-selector",
                                        "involvedObject.name=orphan",
                                        "-o",
                                        "jsonpath={.items[*].message}")
                                .assertOk()
                                .out())
                        .contains("Could not migrate the ephemeral disk"));
    }

    /**
     * An impostor where node a's agent was: it listens on the port node a publishes, with another self-signed
     * certificate. The agent on b refuses it at the TLS handshake, before its peer token is sent; the successor
     * gets a DiskMigrationFailed Warning and its task starts without the data, as Nomad does when a migration fails.
     */
    @Test
    void aForgedPeerGetsNoTokenAndTheSuccessorStartsWithAWarning() throws Exception {
        kubectl.runWithInput(
                        alloc("forged-1", "a", null, "echo private > \"$DROVER_ALLOC_DIR/data/note\"; exec sleep 600"),
                        "apply",
                        "-f",
                        "-")
                .assertOk();
        kubectl.waitForClientStatus("forged-1", "Running", Duration.ofSeconds(30));
        await().atMost(Duration.ofSeconds(10)).until(() -> Files.exists(file("a", "forged-1", "alloc/data/note")));
        kubectl.run("patch", "alloc", "forged-1", "--type=merge", "-p", "{\"spec\":{\"desiredStatus\":\"Stop\"}}")
                .assertOk();
        kubectl.waitForClientStatus("forged-1", "Complete", Duration.ofSeconds(30));
        int port = Integer.parseInt(
                kubectl.run("get", "node", "a", "-o", "jsonpath={.metadata.annotations.drover\\.dev/agent-api-port}")
                        .assertOk()
                        .out()
                        .trim());
        agentA.stop();
        Long pid = null;
        try (ForgedAgent impostor = ForgedAgent.listen(port, dir.resolve("forged-tls"))) {
            kubectl.runWithInput(
                            alloc(
                                    "forged-2",
                                    "b",
                                    "forged-1",
                                    "echo $$ > \"$DROVER_TASK_DIR/local/pid\";"
                                            + " cat \"$DROVER_ALLOC_DIR/data/note\" > \"$DROVER_TASK_DIR/local/seen\""
                                            + " 2>/dev/null; echo started >> \"$DROVER_TASK_DIR/local/seen\";"
                                            + " exec sleep 600"),
                            "apply",
                            "-f",
                            "-")
                    .assertOk();
            kubectl.waitForClientStatus("forged-2", "Running", Duration.ofSeconds(40));
            Path pidFile = file("b", "forged-2", "app/local/pid");
            await().atMost(Duration.ofSeconds(10)).until(() -> Files.exists(pidFile) && Files.size(pidFile) > 0);
            pid = Long.parseLong(Files.readString(pidFile).trim());
            await().atMost(Duration.ofSeconds(10)).until(() -> Files.exists(file("b", "forged-2", "app/local/seen")));
            assertThat(file("b", "forged-2", "app/local/seen"))
                    .as("the task started, without the data")
                    .hasContent("started");
            await().atMost(Duration.ofSeconds(10))
                    .untilAsserted(() -> assertThat(kubectl.run(
                                            "get",
                                            "events",
                                            "--field-selector",
                                            "involvedObject.name=forged-2,type=Warning,reason=DiskMigrationFailed",
                                            "-o",
                                            "jsonpath={.items[*].message}")
                                    .assertOk()
                                    .out())
                            .contains("Could not migrate the ephemeral disk of previous allocation forged-1;"
                                    + " starting with an empty one: the agent at 127.0.0.1:" + port
                                    + " is not the one node a names"));
            assertThat(impostor.handshakes()).as("the impostor was dialled").isPositive();
            assertThat(impostor.requests())
                    .as("no request, so no token, reached it")
                    .isZero();
        } finally {
            if (pid != null) {
                ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
            }
            agentA.start();
        }
    }

    /**
     * Issue 16 item 17: an API server without the CRD's CEL rules lets {@code spec.nodeName} change (this one
     * enforces them, so the test takes the rule out of the stored CRD first, as such a server would not have it).
     * The old node's agent (its watch selects on the field, so it sees a delete) kills the task and frees the
     * directory; the new node's agent runs it; the delete completes.
     */
    @Test
    void anAllocationMovedToAnotherNodeStopsOnTheOldOneAndRunsOnTheNew() throws Exception {
        String pidScript = "echo $$ > \"$DROVER_TASK_DIR/local/pid\"; exec sleep 600";
        kubectl.runWithInput(alloc("mover", "a", null, pidScript), "apply", "-f", "-")
                .assertOk();
        kubectl.waitForClientStatus("mover", "Running", Duration.ofSeconds(30));
        Path pidOnA = file("a", "mover", "app/local/pid");
        await().atMost(Duration.ofSeconds(10)).until(() -> Files.exists(pidOnA) && Files.size(pidOnA) > 0);
        long pid = Long.parseLong(Files.readString(pidOnA).trim());
        kubectl.run(
                        "patch",
                        "crd",
                        "allocations.drover.dev",
                        "--type=json",
                        "-p",
                        "[{\"op\":\"remove\",\"path\":\"/spec/versions/0/schema/openAPIV3Schema/properties/spec"
                                + "/properties/nodeName/x-kubernetes-validations\"}]")
                .assertOk();
        kubectl.run("patch", "alloc", "mover", "--type=merge", "-p", "{\"spec\":{\"nodeName\":\"b\"}}")
                .assertOk();
        await().atMost(Duration.ofSeconds(30))
                .until(() -> ProcessHandle.of(pid).map(p -> !p.isAlive()).orElse(true)
                        && !Files.exists(file("a", "mover", "")));
        Path pidOnB = file("b", "mover", "app/local/pid");
        await().atMost(Duration.ofSeconds(30)).until(() -> Files.exists(pidOnB) && Files.size(pidOnB) > 0);
        kubectl.run("delete", "alloc", "mover", "--timeout=60s").assertOk();
        assertThat(file("b", "mover", "")).doesNotExist();
    }
}
