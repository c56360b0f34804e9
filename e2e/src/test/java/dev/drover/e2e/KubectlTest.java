package dev.drover.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.local.LocalApiServer;
import io.fabric8.kubernetes.api.model.EventBuilder;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The local API server as the real kubectl sees it. */
class KubectlTest {

    static final Path EXAMPLES = Path.of("..", "examples");

    @TempDir
    static Path dir;

    static LocalApiServer server;
    static Kubectl kubectl;

    @BeforeAll
    static void start() throws Exception {
        server = LocalApiServer.start(LocalApiServer.Options.defaults()
                .withNodes(List.of("local", "other"))
                .withKubeconfig(dir.resolve("kubeconfig")));
        kubectl = new Kubectl(server.kubeconfig());
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    private static String alloc(String name, String extraSpec) {
        return """
                apiVersion: drover.dev/v1alpha1
                kind: Allocation
                metadata: {name: %s, namespace: default}
                spec:
                  nodeName: local
                %s  tasks:
                  - name: web
                    driver: mock
                    config: {runFor: 1h}
                """.formatted(name, extraSpec);
    }

    @Test
    void applyCreatesAndUpdatesAndGenerationFollowsSpecChanges() {
        assertThat(kubectl.runWithInput(alloc("apply-me", ""), "apply", "-f", "-")
                        .assertOk()
                        .out())
                .contains("allocation.drover.dev/apply-me created");
        assertThat(kubectl.run("get", "alloc", "apply-me", "-o", "jsonpath={.metadata.generation}")
                        .assertOk()
                        .out())
                .isEqualTo("1");
        assertThat(kubectl.runWithInput(alloc("apply-me", "  desiredStatus: Stop\n"), "apply", "-f", "-")
                        .assertOk()
                        .out())
                .contains("allocation.drover.dev/apply-me configured");
        assertThat(kubectl.run(
                                "get",
                                "alloc",
                                "apply-me",
                                "-o",
                                "jsonpath={.metadata.generation} {.spec.desiredStatus}")
                        .assertOk()
                        .out())
                .isEqualTo("2 Stop");
        kubectl.run("label", "alloc", "apply-me", "team=a").assertOk();
        assertThat(kubectl.run("get", "alloc", "apply-me", "-o", "jsonpath={.metadata.generation}")
                        .assertOk()
                        .out())
                .as("metadata changes leave the generation alone")
                .isEqualTo("2");
    }

    @Test
    void examplesApplyAndGetShowsThePrinterColumns() {
        kubectl.run("apply", "-f", EXAMPLES.toString()).assertOk();
        String table = kubectl.run("get", "alloc").assertOk().out();
        assertThat(table.lines().findFirst().orElseThrow().split("\\s+"))
                .containsExactly("NAME", "NODE", "STATUS", "READY", "RESTARTS", "AGE");
        assertThat(table)
                .contains("hello", "batch", "lifecycle", "raw-exec", "restart-policy", "gpu", "web", "gpu-container");
        assertThat(kubectl.run("get", "drover").assertOk().out())
                .as("the category")
                .contains("hello");
    }

    /** The deletion lands after kubectl listed the object: its watch must still see DELETED (it hung before). */
    @Test
    void deleteWaitsForAFinalizerAndReturnsOnceTheObjectIsGone() throws Exception {
        kubectl.runWithInput(alloc("finalized", ""), "apply", "-f", "-").assertOk();
        var allocs = server.client().resources(Allocation.class).inNamespace("default");
        allocs.withName("finalized").edit(a -> {
            a.getMetadata().setFinalizers(java.util.List.of("test.drover.dev/hold"));
            return a;
        });
        Process delete = kubectl.start("delete", "alloc", "finalized", "--timeout=20s");
        org.awaitility.Awaitility.await()
                .atMost(java.time.Duration.ofSeconds(10))
                .until(() -> allocs.withName("finalized").get().getMetadata().getDeletionTimestamp() != null);
        Thread.sleep(500); // kubectl is now watching
        allocs.withName("finalized").edit(a -> {
            a.getMetadata().setFinalizers(java.util.List.of());
            return a;
        });
        assertThat(delete.waitFor(10, java.util.concurrent.TimeUnit.SECONDS))
                .as("kubectl delete returned")
                .isTrue();
        assertThat(delete.exitValue()).isZero();
        assertThat(allocs.withName("finalized").get()).isNull();
    }

    @Test
    void describeShowsTheAllocationsEvents() {
        kubectl.runWithInput(alloc("described", ""), "apply", "-f", "-").assertOk();
        Allocation a = server.client()
                .resources(Allocation.class)
                .inNamespace("default")
                .withName("described")
                .get();
        server.client()
                .v1()
                .events()
                .inNamespace("default")
                .resource(new EventBuilder()
                        .withNewMetadata()
                        .withName("described.started")
                        .endMetadata()
                        .withNewInvolvedObject()
                        .withApiVersion("drover.dev/v1alpha1")
                        .withKind("Allocation")
                        .withName("described")
                        .withNamespace("default")
                        .withUid(a.getMetadata().getUid())
                        .endInvolvedObject()
                        .withReason("Started")
                        .withMessage("Task web started")
                        .withType("Normal")
                        .withCount(1)
                        .withFirstTimestamp("2026-11-22T10:00:00Z")
                        .withLastTimestamp("2026-11-22T10:00:00Z")
                        .build())
                .create();
        String out = kubectl.run("describe", "alloc", "described").assertOk().out();
        assertThat(out).contains("Node Name:", "local").containsPattern("Normal\\s+Started\\s+.*Task web started");
    }

    /** The plugin as a user runs it: what it prints is its answer, with no library's log line on stderr. */
    @Test
    void thePluginLeavesStderrEmptyOnSuccessAndFailsInOneLine() {
        Path plugins = Path.of("..", "operator", "bin");
        org.junit.jupiter.api.Assumptions.assumeTrue(
                Files.isRegularFile(Path.of("..", "operator", "target", "drover-agent.jar")),
                "the plugin runs the agent jar: ./mvnw -pl operator package");
        kubectl.runWithInput(alloc("plugin-quiet", ""), "apply", "-f", "-").assertOk();
        var status = kubectl.plugin(plugins, "drover", "status", "plugin-quiet");
        assertThat(status.exitCode()).as(status.err()).isZero();
        assertThat(status.out()).containsPattern("(?m)^Name += plugin-quiet$");
        assertThat(status.err()).as("the client's log lines stay off").isEmpty();
        var missing = kubectl.plugin(plugins, "drover", "status", "no-such-alloc");
        assertThat(missing.exitCode()).isEqualTo(1);
        assertThat(missing.err()).isEqualTo("kubectl drover: allocation default/no-such-alloc not found\n");
        var verbose = kubectl.plugin(plugins, "drover", "status", "plugin-quiet", "-v");
        assertThat(verbose.exitCode()).isZero();
        assertThat(verbose.err())
                .as("-v shows them: each request")
                .containsPattern("INFO +KubeClient - GET https://[^ ]+/apis/drover.dev/v1alpha1/namespaces/default/"
                        + "allocations/plugin-quiet 200 in [0-9]+ ms");
        var help = kubectl.plugin(plugins, "drover", "--help");
        assertThat(help.exitCode()).isZero();
        assertThat(help.out()).contains("commands:", "logs ALLOC TASK", "--kubeconfig FILE");
        assertThat(help.err()).isEmpty();
        var bad = kubectl.plugin(plugins, "drover", "status", "plugin-quiet", "--colour");
        assertThat(bad.exitCode()).isEqualTo(2);
        assertThat(bad.err().lines().findFirst().orElseThrow()).isEqualTo("kubectl drover: unknown flag \"--colour\"");
    }

    /**
     * kubectl itself completes {@code kubectl drover <TAB>} through {@code kubectl_complete-drover}, allocation names
     * from the API server included; {@code version} reads the Nodes, where no agent runs here.
     */
    @Test
    void kubectlCompletesThePluginsWordsAndVersionReadsTheNodes() {
        Path plugins = Path.of("..", "operator", "bin");
        org.junit.jupiter.api.Assumptions.assumeTrue(
                Files.isRegularFile(Path.of("..", "operator", "target", "drover-agent.jar")),
                "the plugin runs the agent jar: ./mvnw -pl operator package");
        kubectl.runWithInput(alloc("plugin-complete", ""), "apply", "-f", "-").assertOk();
        var commands = kubectl.plugin(plugins, "__complete", "drover", "ver");
        assertThat(commands.out()).contains("version\t", ":4");
        var names = kubectl.plugin(plugins, "__complete", "drover", "status", "plugin-comp");
        assertThat(names.exitCode()).as(names.err()).isZero();
        assertThat(names.out().lines()).contains("plugin-complete", ":4");
        var tasks = kubectl.plugin(plugins, "__complete", "drover", "logs", "plugin-complete", "");
        assertThat(tasks.out().lines()).contains("web");
        var version = kubectl.plugin(plugins, "drover", "version");
        assertThat(version.exitCode()).as(version.err()).isZero();
        assertThat(version.out()).startsWith("Client Version: ").contains("Agent Versions: none found");
    }

    @Test
    void misspelledFieldIsRefusedNamingIt() {
        var result = kubectl.runWithInput(alloc("typo", "").replace("driver: mock", "drivr: mock"), "apply", "-f", "-");
        assertThat(result.exitCode()).isNotZero();
        assertThat(result.err()).contains("unknown field \"spec.tasks[0].drivr\"");
        assertThat(kubectl.run("get", "alloc", "typo").exitCode()).isNotZero();
    }

    @Test
    void badEnumValueIsRefusedNamingTheField() {
        var result = kubectl.runWithInput(alloc("bad-enum", "  desiredStatus: Halt\n"), "apply", "-f", "-");
        assertThat(result.exitCode()).isNotZero();
        assertThat(result.err()).contains("spec.desiredStatus", "Unsupported value: \"Halt\"");
    }

    @Test
    void statusIsWrittenOnlyThroughTheStatusSubresource() {
        kubectl.runWithInput(alloc("status-only", ""), "apply", "-f", "-").assertOk();
        kubectl.run(
                        "patch",
                        "alloc",
                        "status-only",
                        "--subresource=status",
                        "--type=merge",
                        "-p",
                        "{\"status\":{\"clientStatus\":\"Running\",\"ready\":\"1/1\",\"restarts\":0}}")
                .assertOk();
        kubectl.run("patch", "alloc", "status-only", "--type=merge", "-p", "{\"status\":{\"clientStatus\":\"Failed\"}}")
                .assertOk();
        assertThat(kubectl.run(
                                "get",
                                "alloc",
                                "status-only",
                                "-o",
                                "jsonpath={.status.clientStatus} {.metadata.generation}")
                        .assertOk()
                        .out())
                .isEqualTo("Running 1");
        assertThat(kubectl.run("get", "alloc", "status-only").assertOk().out())
                .containsPattern("status-only\\s+local\\s+Running\\s+1/1\\s+0");
    }

    @Test
    void waitSeesAStatusWrittenMeanwhile() throws Exception {
        kubectl.runWithInput(alloc("waited", ""), "apply", "-f", "-").assertOk();
        Process wait =
                kubectl.start("wait", "--for=jsonpath={.status.clientStatus}=Running", "alloc/waited", "--timeout=20s");
        Thread.sleep(500); // let wait list and start watching; it must see the change either way
        kubectl.run(
                        "patch",
                        "alloc",
                        "waited",
                        "--subresource=status",
                        "--type=merge",
                        "-p",
                        "{\"status\":{\"clientStatus\":\"Running\"}}")
                .assertOk();
        assertThat(wait.waitFor(25, TimeUnit.SECONDS)).isTrue();
        assertThat(new String(wait.getInputStream().readAllBytes(), StandardCharsets.UTF_8))
                .contains("condition met");
        assertThat(wait.exitValue()).isZero();
    }

    @Test
    void getWatchStreamsLaterChanges() throws Exception {
        kubectl.runWithInput(alloc("watched", ""), "apply", "-f", "-").assertOk();
        Process watch = kubectl.start("get", "alloc", "watched", "-w");
        List<String> lines = new CopyOnWriteArrayList<>();
        Thread reader = Thread.ofVirtual().start(() -> {
            try (var in = new BufferedReader(new InputStreamReader(watch.getInputStream(), StandardCharsets.UTF_8))) {
                in.lines().forEach(lines::add);
            } catch (Exception ignored) {
                // the process was destroyed
            }
        });
        try {
            await().atMost(Duration.ofSeconds(15)).until(() -> lines.stream().anyMatch(l -> l.startsWith("watched")));
            kubectl.run(
                            "patch",
                            "alloc",
                            "watched",
                            "--subresource=status",
                            "--type=merge",
                            "-p",
                            "{\"status\":{\"clientStatus\":\"Complete\"}}")
                    .assertOk();
            await().atMost(Duration.ofSeconds(15)).until(() -> lines.stream().anyMatch(l -> l.contains("Complete")));
        } finally {
            watch.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            reader.join(Duration.ofSeconds(5));
        }
    }

    @Test
    void deleteRemovesTheObject() {
        kubectl.runWithInput(alloc("deleted", ""), "apply", "-f", "-").assertOk();
        assertThat(kubectl.run("delete", "alloc", "deleted").assertOk().out()).contains("deleted");
        assertThat(kubectl.run("get", "alloc", "deleted").err()).contains("NotFound");
    }

    @Test
    void crdAppliedLaterIsDiscoverable() throws Exception {
        Path crd = dir.resolve("widgets.yaml");
        Files.writeString(crd, """
                apiVersion: apiextensions.k8s.io/v1
                kind: CustomResourceDefinition
                metadata: {name: widgets.example.com}
                spec:
                  group: example.com
                  names: {kind: Widget, plural: widgets, singular: widget, shortNames: [wd]}
                  scope: Namespaced
                  versions:
                  - name: v1
                    served: true
                    storage: true
                    schema:
                      openAPIV3Schema:
                        type: object
                        properties:
                          spec: {type: object, properties: {size: {type: integer}}}
                """);
        kubectl.run("apply", "-f", crd.toString()).assertOk();
        kubectl.runWithInput("""
                apiVersion: example.com/v1
                kind: Widget
                metadata: {name: w1}
                spec: {size: 3}
                """, "apply", "-f", "-").assertOk();
        assertThat(kubectl.run("get", "wd", "w1", "-o", "jsonpath={.spec.size}")
                        .assertOk()
                        .out())
                .isEqualTo("3");
    }

    @Test
    void endpointSlicesAreServedAndGoWithTheirService() {
        kubectl.runWithInput("""
                        apiVersion: v1
                        kind: Service
                        metadata: {name: web, namespace: default}
                        spec:
                          ports: [{name: http, port: 80, targetPort: http}]
                        """, "apply", "-f", "-").assertOk();
        String uid = kubectl.run("get", "service", "web", "-o", "jsonpath={.metadata.uid}")
                .assertOk()
                .out()
                .trim();
        kubectl.runWithInput("""
                        apiVersion: discovery.k8s.io/v1
                        kind: EndpointSlice
                        metadata:
                          name: web-1
                          namespace: default
                          labels: {kubernetes.io/service-name: web}
                          ownerReferences: [{apiVersion: v1, kind: Service, name: web, uid: %s, controller: true}]
                        addressType: IPv4
                        endpoints: [{addresses: [10.0.0.7], nodeName: local, conditions: {ready: true}}]
                        ports: [{name: http, port: 20001, protocol: TCP}]
                        """.formatted(uid), "apply", "-f", "-").assertOk();
        assertThat(kubectl.run("get", "endpointslices", "-l", "kubernetes.io/service-name=web", "-o", "name")
                        .assertOk()
                        .out())
                .contains("endpointslice.discovery.k8s.io/web-1");

        kubectl.run("delete", "service", "web").assertOk();

        assertThat(kubectl.run("get", "endpointslices", "-o", "name").assertOk().out())
                .as("the garbage collector deletes the slices the Service owned")
                .doesNotContain("web-1");
    }

    @Test
    void nodesExist() {
        assertThat(kubectl.run("get", "nodes", "-o", "name").assertOk().out()).contains("node/local", "node/other");
    }

    /**
     * With the agent's default ({@code events.taskEvents: folded}) describe shows the start, every Warning and the end,
     * in the order they happened.
     */
    @Test
    void describeShowsTheStartEveryWarningAndTheEndOfAFoldedHistory() {
        kubectl.runWithInput(alloc("folded", ""), "apply", "-f", "-").assertOk();
        Allocation a = server.client()
                .resources(Allocation.class)
                .inNamespace("default")
                .withName("folded")
                .get();
        try (var recorder = new dev.drover.controller.events.EventRecorder(
                new dev.drover.controller.events.EventPoster(server.client()), "local")) {
            java.time.Instant t0 = java.time.Instant.now().minusSeconds(60);
            Object[][] history = {
                {"init", "Received", 0, null}, {"web", "Received", 0, null}, {"init", "Started", 1, null},
                {"web", "Started", 1, null}, {"web", "Terminated", 20, 3}, {"web", "Restarting", 21, null},
                {"web", "Started", 22, null}, {"init", "Killing", 40, null}, {"web", "Killing", 40, null},
                {"init", "Killed", 41, null}, {"web", "Killed", 41, null}
            };
            for (Object[] h : history) {
                var event = new dev.drover.api.v1alpha1.TaskEvent();
                event.setType(dev.drover.api.v1alpha1.TaskEventType.valueOf((String) h[1]));
                event.setMessage(h[1] + " of " + h[0]);
                event.setTime(t0.plusSeconds((Integer) h[2]).toString());
                event.setExitCode((Integer) h[3]);
                recorder.record(a, (String) h[0], event, java.time.InstantSource.system());
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> recorder.written() == 3);
        }
        String out = kubectl.run("describe", "alloc", "folded").assertOk().out();
        assertThat(out.substring(out.indexOf("Events:")))
                .containsPattern("(?s)Normal\\s+Started\\s+[^\\n]*Received, Started: tasks init, web\\n"
                        + ".*Warning\\s+Terminated\\s+[^\\n]*Task web: Terminated of web\\n"
                        + ".*Normal\\s+Killed\\s+[^\\n]*Restarting, Started, Killing, Killed: task web; Killing, Killed:"
                        + " task init\\n");
    }

    /**
     * A task's Received, TaskSetup and Started of one second, as the agent's recorder writes them, are described in
     * the order they happened, whatever order the API server lists them in.
     */
    @Test
    void describeListsTheEventsOfOneSecondInTheOrderTheyHappened() {
        kubectl.runWithInput(alloc("ordered", ""), "apply", "-f", "-").assertOk();
        Allocation a = server.client()
                .resources(Allocation.class)
                .inNamespace("default")
                .withName("ordered")
                .get();
        try (var recorder = new dev.drover.controller.events.EventRecorder(
                new dev.drover.controller.events.EventPoster(server.client()),
                "local",
                dev.drover.controller.events.EventRate.DEFAULT,
                dev.drover.controller.events.TaskEventFilter.ALL)) {
            String second = java.time.Instant.now().toString().substring(0, 19);
            for (String[] e :
                    List.of(new String[] {"Started", ".900"}, new String[] {"Received", ".000120"}, new String[] {
                        "TaskSetup", ".450"
                    })) {
                var event = new dev.drover.api.v1alpha1.TaskEvent();
                event.setType(dev.drover.api.v1alpha1.TaskEventType.valueOf(e[0]));
                event.setMessage(e[0] + " of web");
                event.setTime(second + e[1] + "Z");
                recorder.record(a, "web", event, java.time.InstantSource.system());
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> recorder.written() == 3);
        }
        String out = kubectl.run("describe", "alloc", "ordered").assertOk().out();
        assertThat(out.substring(out.indexOf("Events:")))
                .containsPattern("(?s)Normal\\s+Received\\s+.*Normal\\s+TaskSetup\\s+.*Normal\\s+Started\\s+");

        String events = kubectl.run("get", "events", "--field-selector", "involvedObject.name=ordered")
                .assertOk()
                .out();
        assertThat(events.lines().findFirst().orElseThrow()).matches("LAST SEEN +TYPE +REASON +OBJECT +MESSAGE");
        assertThat(events)
                .containsPattern("(?m)^\\d+s +Normal +Received +allocation/ordered +Task web: Received of web$");
        String wide = kubectl.run("get", "events", "--field-selector", "involvedObject.name=ordered", "-o", "wide")
                .assertOk()
                .out();
        assertThat(wide.lines().findFirst().orElseThrow())
                .matches("LAST SEEN +TYPE +REASON +OBJECT +SUBOBJECT +SOURCE +MESSAGE +FIRST SEEN +COUNT +NAME");
        assertThat(wide).contains("drover-agent, local");
    }

    @Test
    void nodesArePrintedWithTheColumnsOfARealServer() {
        server.client()
                .nodes()
                .withName("other")
                .edit(n -> new io.fabric8.kubernetes.api.model.NodeBuilder(n)
                        .editMetadata()
                        .addToLabels("node-role.kubernetes.io/worker", "")
                        .addToLabels("node-role.kubernetes.io/gpu", "")
                        .endMetadata()
                        .editOrNewSpec()
                        .withUnschedulable(true)
                        .endSpec()
                        .build());
        server.client()
                .nodes()
                .withName("other")
                .editStatus(n -> new io.fabric8.kubernetes.api.model.NodeBuilder(n)
                        .editStatus()
                        .addNewAddress("10.0.0.7", "InternalIP")
                        .withNewNodeInfo()
                        .withKubeletVersion("v1.31.4")
                        .withOsImage("Debian GNU/Linux 13 (trixie)")
                        .withKernelVersion("6.12.0")
                        .withContainerRuntimeVersion("containerd://2.0.0")
                        .endNodeInfo()
                        .endStatus()
                        .build());
        String out = kubectl.run("get", "nodes").assertOk().out();
        assertThat(out.lines().findFirst().orElseThrow()).matches("NAME +STATUS +ROLES +AGE +VERSION");
        assertThat(out)
                .containsPattern("(?m)^local +Ready +<none> +\\S+ *$")
                .containsPattern("(?m)^other +Ready,SchedulingDisabled +gpu,worker +\\S+ +v1\\.31\\.4$");
        String wide = kubectl.run("get", "nodes", "-o", "wide").assertOk().out();
        assertThat(wide.lines().findFirst().orElseThrow())
                .matches("NAME +STATUS +ROLES +AGE +VERSION +INTERNAL-IP +EXTERNAL-IP +OS-IMAGE +KERNEL-VERSION"
                        + " +CONTAINER-RUNTIME");
        assertThat(wide).contains("10.0.0.7", "<none>", "Debian GNU/Linux 13 (trixie)", "6.12.0", "containerd://2.0.0");
    }
}
