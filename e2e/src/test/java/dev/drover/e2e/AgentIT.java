package dev.drover.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.local.LocalApiServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 6's acceptance: the local API server, the real kubectl, and the agent
 * jar as a separate process for node {@code local} (mock and raw_exec enabled).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class AgentIT {

    static final Path EXAMPLES = Path.of("..", "examples");

    @TempDir
    static Path dir;

    static LocalApiServer server;
    static Kubectl kubectl;
    static AgentProcess agent;
    static dev.drover.local.LocalGateway gateway;
    static Path data;
    static int metricsPort;
    /** The memory allocations may request on node {@code local}, together (node admission). */
    static final int ALLOCATABLE_MB = 1024;

    @BeforeAll
    static void start() throws Exception {
        server = LocalApiServer.start(LocalApiServer.Options.defaults()
                .withNodes(List.of("local", "elsewhere"))
                .withKubeconfig(dir.resolve("kubeconfig")));
        kubectl = new Kubectl(server.kubeconfig());
        data = dir.resolve("data");
        metricsPort = freePort();
        agent = new AgentProcess(
                        java.nio.file.Files.createDirectories(Path.of("target", "agent-logs"))
                                .resolve("agent-it.log"),
                        AgentKubeconfig.withGateway(
                                server,
                                dir,
                                "--kubeconfig",
                                AgentKubeconfig.forNode(server, "local", dir).toString(),
                                "--node",
                                "local",
                                "--data-dir",
                                data.toString(),
                                "--enable-raw-exec",
                                "--metrics-port",
                                Integer.toString(metricsPort),
                                "--api-port",
                                "0",
                                "--allocatable-memory-mb",
                                Integer.toString(ALLOCATABLE_MB)))
                .start();
        gateway = AgentKubeconfig.gateway(server, dir);
    }

    @AfterAll
    static void stop() throws Exception {
        if (gateway != null) {
            gateway.close();
        }
        if (agent != null) {
            agent.close();
        }
        if (server != null) {
            server.close();
        }
    }

    static int freePort() throws Exception {
        try (var s = new java.net.ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    static void apply(String yaml) {
        kubectl.runWithInput(yaml, "apply", "-f", "-").assertOk();
    }

    static void waitFor(String alloc, String clientStatus) {
        kubectl.waitForClientStatus(alloc, clientStatus, Duration.ofSeconds(25));
    }

    static String mock(String name, String spec, String config) {
        return """
                apiVersion: drover.dev/v1alpha1
                kind: Allocation
                metadata: {name: %s, namespace: default}
                spec:
                  nodeName: local
                %s  tasks:
                  - name: main
                    driver: mock
                    config: %s
                """.formatted(name, spec, config);
    }

    static String rawExec(String name) {
        return """
                apiVersion: drover.dev/v1alpha1
                kind: Allocation
                metadata: {name: %s, namespace: default}
                spec:
                  nodeName: local
                  tasks:
                  - name: sleeper
                    driver: raw_exec
                    config: {command: /bin/sleep, args: ["600"]}
                    killTimeout: 2s
                """.formatted(name);
    }

    static long pidOf(String alloc, String task) throws Exception {
        Path pid = data.resolve("allocs/default/" + alloc + "/" + task + "/.drover-raw-exec/pid");
        await().atMost(Duration.ofSeconds(20)).until(() -> Files.exists(pid));
        return Long.parseLong(Files.readString(pid).strip().split(" ")[0]); // "PID START"
    }

    static boolean alive(long pid) {
        return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }

    /** Ready on a cluster with no allocations yet (it stayed 503 until the first watch event). */
    @Test
    @Order(0)
    void readyBeforeAnyAllocationExists() throws Exception {
        await().atMost(Duration.ofSeconds(10)).until(() -> get("/readyz").contains("ok"));
    }

    @Test
    @Order(1)
    void helloRunsWithinSecondsAndDescribeShowsItsEvents() {
        kubectl.run("apply", "-f", EXAMPLES.resolve("hello.yaml").toString()).assertOk();
        waitFor("hello", "Running");
        String table = kubectl.run("get", "alloc", "hello").assertOk().out();
        assertThat(table).containsPattern("hello\\s+local\\s+Running\\s+1/1\\s+0");
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            String described =
                    kubectl.run("describe", "alloc", "hello").assertOk().out();
            // by default (events.taskEvents: folded) the start is one Event naming its task events
            assertThat(described).containsPattern("Normal\\s+Started\\s+.*Received, TaskSetup.*, Started: task web");
        });
        assertThat(kubectl.allocJsonpath("hello", ".status.conditions[?(@.type==\"Ready\")].status"))
                .isEqualTo("True");
        assertThat(kubectl.allocJsonpath("hello", ".status.observedGeneration")).isEqualTo("1");
        assertThat(kubectl.allocJsonpath("hello", ".metadata.finalizers[0]")).isEqualTo("drover.dev/finalizer");
    }

    @Test
    @Order(2)
    void aBatchAllocationCompletesAndAFailingOneFailsAfterItsRestarts() {
        apply(mock("batch-ok", "  type: Batch\n", "{runFor: 200ms}"));
        apply(mock(
                "batch-bad",
                "  type: Batch\n  restartPolicy: {attempts: 2, interval: 10s, delay: 100ms, mode: Fail}\n",
                "{runFor: 100ms, exitCode: 3}"));
        waitFor("batch-ok", "Complete");
        waitFor("batch-bad", "Failed");
        assertThat(kubectl.allocJsonpath("batch-bad", ".status.taskStates.main.restarts"))
                .isEqualTo("2");
        assertThat(kubectl.allocJsonpath("batch-bad", ".status.taskStates.main.failed"))
                .isEqualTo("true");
        assertThat(kubectl.allocJsonpath("batch-ok", ".status.taskStates.main.failed"))
                .isEqualTo("false");
        assertThat(kubectl.run("describe", "alloc", "batch-bad").assertOk().out())
                .contains("Warning", "NotRestarting");
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(kubectl.run("describe", "alloc", "batch-ok")
                                .assertOk()
                                .out())
                        .as("describe shows its end")
                        .containsPattern("Normal\\s+\\w+\\s+.*Terminated[^:]*: task main"));
    }

    @Test
    @Order(3)
    void anAllocationWithBadFieldsIsFailedWithAConditionNamingThemAndOthersStillRun() {
        // passes the CRD schema, breaks the rules: attempts x delay > interval, and a task env entry without a name
        apply(mock(
                "bad-fields",
                "  restartPolicy: {attempts: 10, interval: 5s, delay: 1s, mode: Fail}\n",
                "{runFor: 1h}"));
        waitFor("bad-fields", "Failed");
        String message = kubectl.allocJsonpath("bad-fields", ".status.conditions[?(@.type==\"SpecValid\")].message");
        assertThat(message).contains("spec.restartPolicy");
        assertThat(kubectl.allocJsonpath("bad-fields", ".status.conditions[?(@.type==\"SpecValid\")].status"))
                .isEqualTo("False");
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(kubectl.run("describe", "alloc", "bad-fields")
                                .assertOk()
                                .out())
                        .contains("FailedValidation", "spec.restartPolicy"));

        apply(mock("after-bad", "", "{runFor: 1h}"));
        waitFor("after-bad", "Running");
        // fixing the spec makes it run
        apply(mock(
                "bad-fields", "  restartPolicy: {attempts: 1, interval: 5s, delay: 1s, mode: Fail}\n", "{runFor: 1h}"));
        waitFor("bad-fields", "Running");
    }

    static String nodeAnnotation(String key) {
        return server.client()
                .nodes()
                .withName("local")
                .get()
                .getMetadata()
                .getAnnotations()
                .get(key);
    }

    @Test
    @Order(4)
    void anAllocationThatDoesNotFitIsRefusedWithOutOfmemoryAndOneThatFitsRuns() {
        apply(mock("too-big", "", "{runFor: 1h}\n    resources: {memoryMB: 1536}"));
        waitFor("too-big", "Failed");
        String admitted = ".status.conditions[?(@.type==\"Admitted\")]";
        assertThat(kubectl.allocJsonpath("too-big", admitted + ".status")).isEqualTo("False");
        assertThat(kubectl.allocJsonpath("too-big", admitted + ".reason")).isEqualTo("OutOfmemory");
        assertThat(kubectl.allocJsonpath("too-big", admitted + ".message"))
                .contains("requested 1536 MB of memory, 1024 free of 1024 allocatable");
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(kubectl.run("describe", "alloc", "too-big")
                                .assertOk()
                                .out())
                        .contains("Warning", "OutOfmemory"));
        assertThat(data.resolve("allocs/default/too-big")).as("never run").doesNotExist();

        apply(mock("fits", "", "{runFor: 1h}\n    resources: {memoryMB: 512, cpuMillis: 100}"));
        waitFor("fits", "Running");
        assertThat(kubectl.allocJsonpath("fits", admitted + ".status")).isEqualTo("True");
        await().atMost(Duration.ofSeconds(10))
                .until(() -> "512".equals(nodeAnnotation("drover.dev/requested-memory-mb")));
        assertThat(nodeAnnotation("drover.dev/allocatable-memory-mb")).isEqualTo(Integer.toString(ALLOCATABLE_MB));
        assertThat(nodeAnnotation("drover.dev/free-memory-mb")).isEqualTo("512");

        kubectl.run("delete", "alloc", "fits", "--wait=true").assertOk();
        await().atMost(Duration.ofSeconds(10))
                .until(() -> "0".equals(nodeAnnotation("drover.dev/requested-memory-mb")));
    }

    @Test
    @Order(4)
    void anAllocationForAnotherNodeIsNeverTouched() throws Exception {
        apply(mock("not-mine", "", "{runFor: 1h}").replace("nodeName: local", "nodeName: elsewhere"));
        apply(mock("mine-after", "", "{runFor: 1h}"));
        waitFor("mine-after", "Running"); // the agent has seen both by now
        Thread.sleep(500);
        Allocation other = server.client()
                .resources(Allocation.class)
                .inNamespace("default")
                .withName("not-mine")
                .get();
        assertThat(other.getStatus()).isNull();
        assertThat(other.getMetadata().getFinalizers()).isEmpty();
        assertThat(data.resolve("allocs/default/not-mine")).doesNotExist();
    }

    @Test
    @Order(5)
    void stopKillsTheTasksAndDeleteRemovesEverything() throws Exception {
        apply(rawExec("stop-me"));
        waitFor("stop-me", "Running");
        long pid = pidOf("stop-me", "sleeper");
        assertThat(alive(pid)).isTrue();
        kubectl.run("patch", "alloc", "stop-me", "--type=merge", "-p", "{\"spec\":{\"desiredStatus\":\"Stop\"}}")
                .assertOk();
        waitFor("stop-me", "Complete");
        await().atMost(Duration.ofSeconds(10)).until(() -> !alive(pid));
        assertThat(kubectl.allocJsonpath("stop-me", ".status.taskStates.sleeper.events[*].type"))
                .contains("Killing", "Killed");
        assertThat(data.resolve("allocs/default/stop-me"))
                .as("Stop keeps the files")
                .exists();

        apply(rawExec("delete-me"));
        waitFor("delete-me", "Running");
        long pid2 = pidOf("delete-me", "sleeper");
        kubectl.run("delete", "alloc", "delete-me", "--timeout=30s").assertOk();
        assertThat(alive(pid2)).as("process gone").isFalse();
        assertThat(data.resolve("allocs/default/delete-me"))
                .as("alloc dir removed")
                .doesNotExist();
        assertThat(kubectl.run("get", "alloc", "delete-me").err()).contains("NotFound");
    }

    @Test
    @Order(6)
    void afterSigkillTheAgentReattachesAndStartsWhatWasCreatedMeanwhile() throws Exception {
        apply(rawExec("survivor"));
        apply(rawExec("gone-meanwhile"));
        waitFor("survivor", "Running");
        waitFor("gone-meanwhile", "Running");
        long pid = pidOf("survivor", "sleeper");
        long gonePid = pidOf("gone-meanwhile", "sleeper");

        agent.kill();
        apply(mock("created-meanwhile", "", "{runFor: 1h}"));
        // removed from the API server while no agent runs: its finalizer taken off, then deleted
        kubectl.run(
                        "patch",
                        "alloc",
                        "gone-meanwhile",
                        "--type=json",
                        "-p",
                        "[{\"op\":\"remove\",\"path\":\"/metadata/finalizers\"}]")
                .assertOk();
        kubectl.run("delete", "alloc", "gone-meanwhile", "--timeout=30s").assertOk();
        Thread.sleep(300);
        agent.start();

        waitFor("created-meanwhile", "Running");
        await().atMost(Duration.ofSeconds(10)).until(() -> !alive(gonePid));
        assertThat(data.resolve("allocs/default/gone-meanwhile"))
                .as("the restored allocation the API server no longer has is destroyed")
                .doesNotExist();
        assertThat(agent.log()).contains("allocation default/gone-meanwhile is gone from the API server");
        assertThat(pidOf("survivor", "sleeper")).isEqualTo(pid);
        assertThat(alive(pid)).isTrue();
        Thread.sleep(1500); // time for a wrong restart to show
        assertThat(kubectl.allocJsonpath("survivor", ".status.taskStates.sleeper.restarts"))
                .isEqualTo("0");
        String types = kubectl.allocJsonpath("survivor", ".status.taskStates.sleeper.events[*].type");
        assertThat(types.split(" ")).containsOnlyOnce("Started");
        assertThat(agent.log()).contains("reattached to task default/survivor/sleeper");
        // the restored runners published statuses the API server already had: skipped, not written
        assertThat(value(get("/metrics"), "drover_status_writes_total\\{result=\"skipped\",?\\}"))
                .isPositive();
    }

    @Test
    @Order(7)
    void metricsServeTheDocumentedSeries() throws Exception {
        String metrics = get("/metrics");
        for (String series : List.of(
                "drover_allocations{client_status=\"Running\"",
                "drover_task_events_total{type=\"Started\"",
                "drover_task_restarts_total",
                "drover_status_writes_total{result=\"written\"",
                "drover_status_writes_total{result=\"skipped\"",
                "drover_state_writes_total{result=\"written\"",
                "drover_state_writes_total{result=\"deduplicated\"",
                "drover_alloc_seen_to_running_seconds_bucket",
                "drover_node_allocatable{resource=\"memory_mb\",} " + ALLOCATABLE_MB,
                "drover_node_requested{resource=\"cpu_millis\"",
                "drover_node_free{resource=\"memory_mb\"",
                "drover_admission_refusals_total{reason=\"OutOfmemory\"",
                "operator_sdk_reconciliations_started_total",
                "operator_sdk_reconciliations_success_total",
                "jvm_threads_current",
                "process_cpu_seconds_total",
                "drover_build_info{version=\"",
                "\ndrover_agent_ready 1.0\n",
                "\ndrover_allocations_failed_total ",
                "\ndrover_allocations_waiting_longest_seconds 0.0\n")) {
            assertThat(metrics).as(series).contains(series);
        }
        assertThat(metrics.lines().filter(l -> l.contains("_created")))
                .as("no simpleclient start-time series")
                .isEmpty();
        assertThat(get("/healthz")).contains("ok");
        assertThat(get("/readyz")).contains("ok");
    }

    /**
     * A raw_exec task's output through the API server (the aggregated API the gateway serves), read with the
     * kubeconfig's own credentials by {@code kubectl get --raw} and by the plugin; the agent's own API takes no user
     * token: the kubeconfig's, shown to it, is refused.
     */
    @Test
    @Order(7)
    void theAggregatedApiServesARawExecTasksOutputToTheKubeconfigsUser() throws Exception {
        apply("""
                apiVersion: drover.dev/v1alpha1
                kind: Allocation
                metadata: {name: chatty, namespace: default}
                spec:
                  nodeName: local
                  tasks:
                  - name: talker
                    driver: raw_exec
                    config: {command: /bin/sh, args: ["-c", "echo hello from drover; echo line two; exec sleep 600"]}
                    killTimeout: 2s
                """);
        waitFor("chatty", "Running");
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(kubectl.run(
                                        "get",
                                        "--raw",
                                        "/apis/agent.drover.dev/v1alpha1/namespaces/default/allocations/chatty/log?tail=1")
                                .out())
                        .as("the only task is the default")
                        .isEqualTo("line two\n"));
        var annotations =
                server.client().nodes().withName("local").get().getMetadata().getAnnotations();
        String base = "https://127.0.0.1:" + annotations.get("drover.dev/agent-api-port")
                + "/v1/allocations/default/chatty/logs/talker";
        try (HttpClient https = HttpClient.newBuilder()
                .sslContext(dev.drover.httpapi.Pinning.to(annotations.get("drover.dev/agent-certificate-sha256")))
                .build()) {
            for (String authorization : List.of("Bearer drover-local", "Bearer not-the-kubeconfigs")) {
                HttpResponse<String> direct = https.send(
                        HttpRequest.newBuilder(URI.create(base))
                                .header("Authorization", authorization)
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
                assertThat(direct.statusCode()).as(authorization).isEqualTo(401);
            }
            HttpResponse<String> anonymous =
                    https.send(HttpRequest.newBuilder(URI.create(base)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(anonymous.statusCode()).isEqualTo(401);
        }
        var plugin =
                kubectl.plugin(Path.of("..", "operator", "bin"), "drover", "logs", "chatty", "talker", "--tail", "1");
        assertThat(plugin.out()).as(plugin.err()).isEqualTo("line two\n");
        assertThat(plugin.exitCode()).isZero();
        assertThat(plugin.err()).as("no log lines on the user's terminal").isEmpty();
        var missing = kubectl.plugin(Path.of("..", "operator", "bin"), "drover", "logs", "chatty", "nobody");
        assertThat(missing.exitCode()).isEqualTo(1);
        assertThat(missing.err()).contains("kubectl drover: allocation default/chatty has no task \"nobody\"");
        assertThat(missing.err().lines()).as("a failure is one line").hasSize(1);

        var stats = kubectl.plugin(PLUGINS, "drover", "stats", "chatty");
        assertThat(stats.exitCode()).as(stats.err()).isZero();
        assertThat(stats.err()).isEmpty();
        assertThat(stats.out())
                .contains("Allocation default/chatty on node local")
                .containsPattern("(?m)^talker +Running +[0-9.]+ % +[0-9.]+ s +[0-9.]+ (KiB|MiB)$");
        var json = kubectl.plugin(PLUGINS, "drover", "stats", "chatty", "--json");
        var usage = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(json.out())
                .path("tasks")
                .path("talker")
                .path("resourceUsage");
        assertThat(usage.path("memory").path("rssBytes").asLong())
                .as(json.out())
                .isPositive();
        assertThat(usage.path("cpu").has("percent")).isTrue();

        var wrongToken = kubectl.plugin(PLUGINS, "drover", "stats", "chatty", "--token=someone-else");
        assertThat(wrongToken.exitCode())
                .as("--token is what the API server is shown")
                .isEqualTo(1);
        assertThat(wrongToken.err()).contains("(HTTP 401)");
        assertThat(wrongToken.err().lines()).hasSize(1);

        var status = kubectl.plugin(PLUGINS, "drover", "status", "chatty");
        assertThat(status.exitCode()).as(status.err()).isZero();
        assertThat(status.err())
                .as("not fabric8's warning about v1alpha1, nor any other log line")
                .isEmpty();
        assertThat(status.out())
                .contains(
                        "Client Status",
                        "Running",
                        "Task \"talker\" is \"Running\"",
                        "Started",
                        "Task started by client");
        kubectl.run("delete", "alloc", "chatty", "--timeout=30s").assertOk();
    }

    static final Path PLUGINS = Path.of("..", "operator", "bin");

    /**
     * Clients pin the agent's certificate by the fingerprint on its Node: whoever may edit Nodes could redirect
     * them. The agent (under the chart's RBAC) watches its Node and sets the fingerprint back.
     */
    @Test
    @Order(7)
    void aTamperedCertificateAnnotationIsSetBackWithinSeconds() {
        String annotation = "drover.dev/agent-certificate-sha256";
        String fingerprint = await().atMost(Duration.ofSeconds(20))
                .until(
                        () -> server.client()
                                .nodes()
                                .withName("local")
                                .get()
                                .getMetadata()
                                .getAnnotations()
                                .get(annotation),
                        f -> f != null && f.length() == 64);
        String forged = fingerprint.startsWith("0") ? "1".repeat(64) : "0".repeat(64);
        kubectl.run("annotate", "node", "local", "--overwrite", annotation + "=" + forged)
                .assertOk();
        long tampered = System.nanoTime();
        await().atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(10))
                .until(() -> fingerprint.equals(server.client()
                        .nodes()
                        .withName("local")
                        .get()
                        .getMetadata()
                        .getAnnotations()
                        .get(annotation)));
        System.out.printf(
                "AgentIT: the tampered certificate annotation was set back in %d ms%n",
                (System.nanoTime() - tampered) / 1_000_000);
    }

    static String tokenFor(String serviceAccount) {
        server.client()
                .serviceAccounts()
                .inNamespace("default")
                .resource(new io.fabric8.kubernetes.api.model.ServiceAccountBuilder()
                        .withNewMetadata()
                        .withName(serviceAccount)
                        .endMetadata()
                        .build())
                .createOr(io.fabric8.kubernetes.client.dsl.NonDeletingOperation::update);
        return server.client()
                .serviceAccounts()
                .inNamespace("default")
                .withName(serviceAccount)
                .tokenRequest(new io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder()
                        .withNewSpec()
                        .endSpec()
                        .build())
                .getStatus()
                .getToken();
    }

    /**
     * The acceptance: a user granted {@code get} on {@code allocations/log} of {@code agent.drover.dev}
     * reads a task's output through the API server, with kubectl and with the plugin; a user without the grant gets
     * the API server's 403; the token the gateway shows agents is refused by the API server, and by the agent
     * without the gateway's client certificate, so a node that keeps it gains nothing.
     */
    @Test
    @Order(7)
    void onlyAUserGrantedAllocationsLogReadsLogsAndTheGatewaysAgentTokenIsNoUseAtTheApiServer() throws Exception {
        apply(mock("greeter", "", "{stdoutString: \"hello, reader\", runFor: 10m}"));
        waitFor("greeter", "Running");
        server.client().resource("""
                        apiVersion: rbac.authorization.k8s.io/v1
                        kind: Role
                        metadata: {name: allocation-logs, namespace: default}
                        rules:
                        - {apiGroups: [agent.drover.dev], resources: [allocations/log], verbs: [get]}
                        """).createOr(io.fabric8.kubernetes.client.dsl.NonDeletingOperation::update);
        server.client().resource("""
                        apiVersion: rbac.authorization.k8s.io/v1
                        kind: RoleBinding
                        metadata: {name: allocation-logs, namespace: default}
                        roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: allocation-logs}
                        subjects:
                        - {kind: ServiceAccount, name: log-reader, namespace: default}
                        """).createOr(io.fabric8.kubernetes.client.dsl.NonDeletingOperation::update);
        String reader = tokenFor("log-reader");
        String stranger = tokenFor("stranger");
        String path = "/apis/agent.drover.dev/v1alpha1/namespaces/default/allocations/greeter/log?task=main";

        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(kubectl.run("--token", reader, "get", "--raw", path)
                                .out())
                        .contains("hello, reader"));
        var plugin = kubectl.plugin(PLUGINS, "drover", "logs", "greeter", "main", "--token", reader);
        assertThat(plugin.exitCode()).as(plugin.err()).isZero();
        assertThat(plugin.out()).contains("hello, reader");
        var noStats = kubectl.plugin(PLUGINS, "drover", "stats", "greeter", "--token", reader);
        assertThat(noStats.exitCode()).as("allocations/stats is not granted").isEqualTo(1);
        assertThat(noStats.err()).contains("(HTTP 403)");

        var refused = kubectl.run("--token", stranger, "get", "--raw", path);
        assertThat(refused.exitCode()).isNotZero();
        assertThat(refused.err()).containsIgnoringCase("forbidden").contains("allocations/log");

        String captured = Files.readString(gateway.peerTokenFile()).strip();
        var replayed = kubectl.run("--token", captured, "get", "--raw", path);
        assertThat(replayed.exitCode()).isNotZero();
        assertThat(replayed.err()).containsIgnoringCase("unauthorized");
        // nor at an agent: without the gateway's client certificate its token is refused there too
        var agentAnswer = org.assertj.core.api.Assertions.catchThrowableOfType(
                dev.drover.httpapi.AgentClient.AgentException.class,
                () -> dev.drover.httpapi.AgentClient.get(
                        dev.drover.httpapi.AgentClient.find(server.client(), "local"),
                        dev.drover.agentapi.AgentProtocol.agentPath("default", "greeter", "logs/main"),
                        captured,
                        Duration.ofSeconds(10),
                        body -> body.readAllBytes()));
        assertThat(agentAnswer.status()).isEqualTo(401);
        assertThat(agentAnswer.getMessage()).contains("client certificate");
        kubectl.run("delete", "alloc", "greeter", "--timeout=30s").assertOk();
    }

    /** Waits until the allocation's start is a Kubernetes Event: its fold closed, so what happens next has its own. */
    private void awaitStartedEvent(String alloc) {
        await().atMost(Duration.ofSeconds(15))
                .until(() -> server.client().v1().events().inNamespace("default").list().getItems().stream()
                        .anyMatch(
                                e -> alloc.equals(e.getInvolvedObject().getName()) && "Started".equals(e.getReason())));
    }

    /**
     * Issue 22's exec: a user granted {@code get} and {@code create} on {@code allocations/exec} runs commands inside
     * a raw_exec task with {@code kubectl drover exec}, through the API server (which relays the WebSocket), the
     * gateway and the agent: {@code cat} gets its input back, {@code sh -c 'exit 3'} exits 3, and the Kubernetes
     * Event names the user. A user who may only {@code get} (past the API server, refused by the gateway) and one
     * with no grant (refused by the API server) get 403.
     */
    @Test
    @Order(7)
    void aUserGrantedAllocationsExecRunsCommandsInARawExecTask() throws Exception {
        apply("""
                apiVersion: drover.dev/v1alpha1
                kind: Allocation
                metadata: {name: shell, namespace: default}
                spec:
                  nodeName: local
                  tasks:
                  - name: app
                    driver: raw_exec
                    config: {command: /bin/sh, args: ["-c", "while true; do sleep 1; done"]}
                    killTimeout: 2s
                """);
        waitFor("shell", "Running");
        server.client().resource("""
                        apiVersion: rbac.authorization.k8s.io/v1
                        kind: Role
                        metadata: {name: allocation-exec, namespace: default}
                        rules:
                        - {apiGroups: [agent.drover.dev], resources: [allocations/exec], verbs: [get, create]}
                        """).createOr(io.fabric8.kubernetes.client.dsl.NonDeletingOperation::update);
        server.client().resource("""
                        apiVersion: rbac.authorization.k8s.io/v1
                        kind: RoleBinding
                        metadata: {name: allocation-exec, namespace: default}
                        roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: allocation-exec}
                        subjects:
                        - {kind: ServiceAccount, name: execer, namespace: default}
                        """).createOr(io.fabric8.kubernetes.client.dsl.NonDeletingOperation::update);
        server.client().resource("""
                        apiVersion: rbac.authorization.k8s.io/v1
                        kind: Role
                        metadata: {name: allocation-exec-get, namespace: default}
                        rules:
                        - {apiGroups: [agent.drover.dev], resources: [allocations/exec], verbs: [get]}
                        """).createOr(io.fabric8.kubernetes.client.dsl.NonDeletingOperation::update);
        server.client().resource("""
                        apiVersion: rbac.authorization.k8s.io/v1
                        kind: RoleBinding
                        metadata: {name: allocation-exec-get, namespace: default}
                        roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: allocation-exec-get}
                        subjects:
                        - {kind: ServiceAccount, name: peeker, namespace: default}
                        """).createOr(io.fabric8.kubernetes.client.dsl.NonDeletingOperation::update);
        String execer = tokenFor("execer");
        awaitStartedEvent("shell"); // the start's fold closed: the exec below has one of its own

        var cat = kubectl.pluginWithInput(
                PLUGINS, "hello\nworld\n", "drover", "exec", "-i", "shell", "app", "--token", execer, "--", "cat");
        assertThat(cat.exitCode()).as(cat.err()).isZero();
        assertThat(cat.out()).isEqualTo("hello\nworld\n");

        await().atMost(Duration.ofSeconds(15))
                .untilAsserted(() -> assertThat(server.client()
                                .v1()
                                .events()
                                .inNamespace("default")
                                .list()
                                .getItems())
                        .anySatisfy(e -> {
                            assertThat(e.getReason()).isEqualTo("Exec");
                            assertThat(e.getInvolvedObject().getName()).isEqualTo("shell");
                            assertThat(e.getMessage())
                                    .as("alone in its fold, the Event keeps its own words: who ran what")
                                    .startsWith("Task app: ")
                                    .contains("\"system:serviceaccount:default:execer\"");
                        })); // its fold closed before the next exec: that one is not folded into it
        var three = kubectl.plugin(
                PLUGINS, "drover", "exec", "shell", "app", "--token", execer, "--", "sh", "-c", "echo out; exit 3");
        assertThat(three.exitCode()).as(three.err()).isEqualTo(3);
        assertThat(three.out()).isEqualTo("out\n");

        for (String refused : List.of("peeker", "stranger")) {
            var r = kubectl.plugin(PLUGINS, "drover", "exec", "shell", "app", "--token", tokenFor(refused), "--", "id");
            assertThat(r.exitCode()).as(refused).isEqualTo(1);
            assertThat(r.err()).as(refused).contains("(HTTP 403)").contains("allocations/exec");
        }
        assertThat(kubectl.allocJsonpath("shell", ".status.taskStates.app.events[?(@.type==\"Exec\")].message"))
                .contains("\"cat\"")
                .contains("\"system:serviceaccount:default:execer\"");
        kubectl.run("delete", "alloc", "shell", "--timeout=30s").assertOk();
    }

    /**
     * Issue 22's signal: a user granted {@code create} on {@code allocations/signal} sends SIGUSR1 to a raw_exec task
     * through the API server and the gateway with {@code kubectl drover signal}; the task's trap sees it, and the
     * Kubernetes Event names the user. A user with only {@code get} on {@code allocations/log} gets 403, an unknown
     * task 404.
     */
    @Test
    @Order(7)
    void aUserGrantedAllocationsSignalSignalsARawExecTaskAndTheEventNamesThem() throws Exception {
        apply("""
                apiVersion: drover.dev/v1alpha1
                kind: Allocation
                metadata: {name: trapper, namespace: default}
                spec:
                  nodeName: local
                  tasks:
                  - name: app
                    driver: raw_exec
                    config: {command: /bin/sh, args: ["-c", "trap 'echo saw USR1' USR1; echo ready; while true; do sleep 1; done"]}
                    killTimeout: 2s
                """);
        waitFor("trapper", "Running");
        server.client().resource("""
                        apiVersion: rbac.authorization.k8s.io/v1
                        kind: Role
                        metadata: {name: allocation-operators, namespace: default}
                        rules:
                        - {apiGroups: [agent.drover.dev], resources: [allocations/signal], verbs: [create]}
                        - {apiGroups: [agent.drover.dev], resources: [allocations/log], verbs: [get]}
                        """).createOr(io.fabric8.kubernetes.client.dsl.NonDeletingOperation::update);
        server.client().resource("""
                        apiVersion: rbac.authorization.k8s.io/v1
                        kind: RoleBinding
                        metadata: {name: allocation-operators, namespace: default}
                        roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: allocation-operators}
                        subjects:
                        - {kind: ServiceAccount, name: operator, namespace: default}
                        """).createOr(io.fabric8.kubernetes.client.dsl.NonDeletingOperation::update);
        server.client().resource("""
                        apiVersion: rbac.authorization.k8s.io/v1
                        kind: Role
                        metadata: {name: allocation-readers, namespace: default}
                        rules:
                        - {apiGroups: [agent.drover.dev], resources: [allocations/log], verbs: [get]}
                        """).createOr(io.fabric8.kubernetes.client.dsl.NonDeletingOperation::update);
        server.client().resource("""
                        apiVersion: rbac.authorization.k8s.io/v1
                        kind: RoleBinding
                        metadata: {name: allocation-readers, namespace: default}
                        roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: allocation-readers}
                        subjects:
                        - {kind: ServiceAccount, name: viewer, namespace: default}
                        """).createOr(io.fabric8.kubernetes.client.dsl.NonDeletingOperation::update);
        String operator = tokenFor("operator");
        String viewer = tokenFor("viewer");
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(
                                kubectl.plugin(PLUGINS, "drover", "logs", "trapper", "app", "--token", operator)
                                        .out())
                        .contains("ready"));

        var refused = kubectl.plugin(PLUGINS, "drover", "signal", "trapper", "app", "SIGUSR1", "--token", viewer);
        assertThat(refused.exitCode()).as("a reader may not act").isEqualTo(1);
        assertThat(refused.err()).contains("(HTTP 403)").contains("allocations/signal");

        awaitStartedEvent("trapper"); // the start's fold closed: the signal below has one of its own
        var sent = kubectl.plugin(PLUGINS, "drover", "signal", "trapper", "app", "SIGUSR1", "--token", operator);
        assertThat(sent.exitCode()).as(sent.err()).isZero();
        assertThat(sent.out()).isEqualTo("sent SIGUSR1 to task app of allocation default/trapper\n");
        await().atMost(Duration.ofSeconds(15))
                .untilAsserted(() -> assertThat(
                                kubectl.plugin(PLUGINS, "drover", "logs", "trapper", "app", "--token", operator)
                                        .out())
                        .contains("saw USR1"));
        await().atMost(Duration.ofSeconds(15))
                .untilAsserted(() -> assertThat(server.client()
                                .v1()
                                .events()
                                .inNamespace("default")
                                .list()
                                .getItems())
                        .anySatisfy(e -> {
                            assertThat(e.getReason()).isEqualTo("Signaling");
                            assertThat(e.getInvolvedObject().getName()).isEqualTo("trapper");
                            assertThat(e.getMessage())
                                    .as("alone in its fold, the Event keeps its own words: who sent it")
                                    .isEqualTo("Task app: Signal SIGUSR1 sent by"
                                            + " \"system:serviceaccount:default:operator\"");
                        }));
        assertThat(kubectl.allocJsonpath("trapper", ".status.taskStates.app.events[?(@.type==\"Signaling\")].message"))
                .isEqualTo("Signal SIGUSR1 sent by \"system:serviceaccount:default:operator\"");

        var noTask = kubectl.plugin(PLUGINS, "drover", "signal", "trapper", "nobody", "HUP", "--token", operator);
        assertThat(noTask.exitCode()).isEqualTo(1);
        assertThat(noTask.err()).contains("has no task \"nobody\"").contains("(HTTP 404)");
        var unknown = kubectl.plugin(PLUGINS, "drover", "signal", "trapper", "app", "SIGNOPE", "--token", operator);
        assertThat(unknown.exitCode()).isEqualTo(1);
        assertThat(unknown.err()).contains("unknown signal").contains("(HTTP 400)");
        kubectl.run("delete", "alloc", "trapper", "--timeout=30s").assertOk();
    }

    /**
     * {@code kubectl drover restart} restarts a running task once, not counted against its policy, and the event
     * names the user; the chart's policy keeps {@code drover.dev/restartedBy} to its writer's own name.
     */
    @Test
    @Order(7)
    void kubectlDroverRestartRestartsOnceAndTheEventNamesTheUserWhomThePolicyVouchesFor() throws Exception {
        apply("""
                apiVersion: drover.dev/v1alpha1
                kind: Allocation
                metadata: {name: restarter, namespace: default}
                spec:
                  nodeName: local
                  tasks:
                  - name: app
                    driver: raw_exec
                    config: {command: /bin/sh, args: ["-c", "while true; do sleep 1; done"]}
                    killTimeout: 2s
                    restartPolicy: {attempts: 0, mode: Fail}
                """);
        waitFor("restarter", "Running");
        server.client().resource("""
                        apiVersion: rbac.authorization.k8s.io/v1
                        kind: Role
                        metadata: {name: allocation-restarters, namespace: default}
                        rules:
                        - {apiGroups: [drover.dev], resources: [allocations], verbs: [get, patch]}
                        """).createOr(io.fabric8.kubernetes.client.dsl.NonDeletingOperation::update);
        server.client().resource("""
                        apiVersion: rbac.authorization.k8s.io/v1
                        kind: RoleBinding
                        metadata: {name: allocation-restarters, namespace: default}
                        roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: allocation-restarters}
                        subjects:
                        - {kind: ServiceAccount, name: restarter, namespace: default}
                        - {kind: ServiceAccount, name: impostor, namespace: default}
                        """).createOr(io.fabric8.kubernetes.client.dsl.NonDeletingOperation::update);
        String restarter = tokenFor("restarter");
        String impostor = tokenFor("impostor");

        var asked = kubectl.plugin(PLUGINS, "drover", "restart", "restarter", "app", "--token", restarter);
        assertThat(asked.exitCode()).as(asked.err()).isZero();
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            Allocation a = server.client()
                    .resources(Allocation.class)
                    .inNamespace("default")
                    .withName("restarter")
                    .get();
            var app = a.getStatus().getTaskStates().get("app");
            assertThat(app.getRestarts()).isEqualTo(1);
            assertThat(app.getState()).isEqualTo(dev.drover.api.v1alpha1.TaskState.State.Running);
            assertThat(app.getFailed())
                    .as("attempts 0, yet not failed: not counted")
                    .isFalse();
            assertThat(app.getEvents())
                    .filteredOn(e -> e.getType() == dev.drover.api.v1alpha1.TaskEventType.RestartSignaled)
                    .singleElement()
                    .satisfies(e -> assertThat(e.getRestartReason())
                            .isEqualTo("User requested restart by \"system:serviceaccount:default:restarter\""));
        });

        // the impostor may patch allocations, but not in someone else's name, nor restart under the name left there
        String path = "/apis/drover.dev/v1alpha1/namespaces/default/allocations/restarter";
        var forged = patchAs(
                impostor,
                path,
                "{\"metadata\":{\"annotations\":{\"drover.dev/restartedAt\":\"x\","
                        + "\"drover.dev/restartedBy\":\"system:serviceaccount:default:restarter\"}}}");
        assertThat(forged.err())
                .contains("drover.dev/restartedBy must name you (system:serviceaccount:default:impostor)");
        var stale = patchAs(impostor, path, "{\"metadata\":{\"annotations\":{\"drover.dev/restartedAt\":\"y\"}}}");
        assertThat(stale.err()).contains("must name you");
        var own = kubectl.plugin(PLUGINS, "drover", "restart", "restarter", "--token", impostor);
        assertThat(own.exitCode()).as(own.err()).isZero();
        await().atMost(Duration.ofSeconds(20))
                .untilAsserted(
                        () -> assertThat(kubectl.allocJsonpath("restarter", ".status.taskStates.*.events[*].message"))
                                .contains("User requested restart by \"system:serviceaccount:default:impostor\""));
        // folded by default: the Events name each restart's RestartSignaled, the status tells who asked
        await().atMost(Duration.ofSeconds(20))
                .until(() -> server.client().v1().events().inNamespace("default").list().getItems().stream()
                                .filter(e -> e.getInvolvedObject().getName().equals("restarter"))
                                .mapToInt(e -> e.getCount() * restartsSignaled(e))
                                .sum()
                        == 2);
        kubectl.run("delete", "alloc", "restarter", "--timeout=30s").assertOk();
    }

    /** Merge-patches {@code path} on the API server with {@code token}; the answer's body when refused, else "". */
    static Kubectl.Result patchAs(String token, String path, String patch) throws Exception {
        try (HttpClient http =
                HttpClient.newBuilder().sslContext(server.trust()).build()) {
            HttpResponse<String> response = http.send(
                    HttpRequest.newBuilder(URI.create(server.url() + path))
                            .header("Authorization", "Bearer " + token)
                            .header("Content-Type", "application/merge-patch+json")
                            .method("PATCH", HttpRequest.BodyPublishers.ofString(patch))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            return new Kubectl.Result(response.statusCode() == 200 ? 0 : 1, "", response.body());
        }
    }

    /** {@code kubectl drover logs -f} shows what the task writes while it runs, and ends when the task is dead. */
    @Test
    @Order(7)
    void theLogsPluginFollowsARawExecTaskUntilItEnds() throws Exception {
        apply("""
                apiVersion: drover.dev/v1alpha1
                kind: Allocation
                metadata: {name: ticker, namespace: default}
                spec:
                  nodeName: local
                  type: Batch
                  tasks:
                  - name: app
                    driver: raw_exec
                    config: {command: /bin/sh, args: ["-c", "echo waiting; while [ ! -f local/go ]; do sleep 0.1; done; echo after the wait"]}
                """);
        waitFor("ticker", "Running");
        Process follow = kubectl.startPlugin(PLUGINS, "drover", "logs", "ticker", "app", "-f");
        try {
            var out = new java.io.BufferedReader(
                    new java.io.InputStreamReader(follow.getInputStream(), java.nio.charset.StandardCharsets.UTF_8));
            assertThat(out.readLine()).isEqualTo("waiting");
            Files.writeString(data.resolve("allocs/default/ticker/app/local/go"), "");
            assertThat(out.readLine()).as("written after the plugin started").isEqualTo("after the wait");
            assertThat(follow.waitFor(20, java.util.concurrent.TimeUnit.SECONDS))
                    .as("ends with the task")
                    .isTrue();
            assertThat(follow.exitValue()).isZero();
        } finally {
            follow.destroyForcibly();
        }
        waitFor("ticker", "Complete");
        kubectl.run("delete", "alloc", "ticker", "--timeout=30s").assertOk();
    }

    static String get(String path) throws Exception {
        try (HttpClient http = HttpClient.newHttpClient()) {
            return http.send(
                            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + metricsPort + path))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString())
                    .body();
        }
    }

    static double value(String metrics, String series) {
        Matcher m = Pattern.compile("(?m)^" + series + " ([0-9.eE+-]+)$").matcher(metrics);
        assertThat(m.find()).as(series).isTrue();
        return Double.parseDouble(m.group(1));
    }

    @Test
    @Order(8)
    void sigtermStopsTheAgentWithExitZeroAndLeavesTasksRunning() throws Exception {
        long pid = pidOf("survivor", "sleeper");
        assertThat(agent.stop()).isZero();
        assertThat(alive(pid)).as("tasks keep running when the agent stops").isTrue();
        agent.start(); // for @AfterAll, and it reattaches once more
        assertThat(pidOf("survivor", "sleeper")).isEqualTo(pid);
        kubectl.run("delete", "alloc", "survivor", "--timeout=30s").assertOk();
        assertThat(alive(pid)).isFalse();
    }

    /** The RestartSignaled task events one Event tells of: named in a fold's message, or the reason of one alone. */
    private static int restartsSignaled(io.fabric8.kubernetes.api.model.Event e) {
        int named = e.getMessage().split("RestartSignaled", -1).length - 1;
        return named == 0 && "RestartSignaled".equals(e.getReason()) ? 1 : named;
    }
}
