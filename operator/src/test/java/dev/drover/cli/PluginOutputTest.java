package dev.drover.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code -o json|yaml} of status, stats and version: what the text shows, under the field names docs/api.md fixes. */
class PluginOutputTest {

    static final String ALLOC_PATH = "/apis/drover.dev/v1alpha1/namespaces/team-a/allocations/web";

    static final String ALLOC = """
            {"apiVersion": "drover.dev/v1alpha1", "kind": "Allocation",
             "metadata": {"name": "web", "namespace": "team-a", "uid": "u-1",
                          "creationTimestamp": "2026-01-01T00:00:00Z", "generation": 2},
             "spec": {"nodeName": "n1", "tasks": [{"name": "main", "driver": "mock", "leader": true}]},
             "status": {"clientStatus": "Running", "clientDescription": "Tasks are running", "ready": "1/1",
                        "observedGeneration": 2,
                        "conditions": [{"type": "Ready", "status": "True", "reason": "TasksRunning",
                                        "lastTransitionTime": "2026-01-01T00:00:01Z"}],
                        "taskStates": {"main": {"state": "Running", "restarts": 1,
                                               "startedAt": "2026-01-01T00:00:05Z",
                                               "events": [
                                                 {"type": "Terminated", "time": "2026-01-01T00:00:03Z",
                                                  "message": "Exit Code: 1", "exitCode": 1},
                                                 {"type": "Started", "time": "2026-01-01T00:00:05Z",
                                                  "message": "Task started by client"}]},
                                       "old": {"state": "Dead"}}}}
            """;

    static final String EVENTS = """
            {"apiVersion": "v1", "kind": "EventList", "metadata": {}, "items": [
              {"metadata": {"name": "web.1", "namespace": "team-a"}, "reason": "Started", "type": "Normal",
               "message": "Task main: \\u001b[31mstarted", "count": 2,
               "involvedObject": {"kind": "Allocation", "name": "web", "uid": "u-1"},
               "firstTimestamp": "2026-01-01T00:00:01Z", "lastTimestamp": "2026-01-01T00:00:06Z"}]}
            """;

    static final String STATS = """
            {"allocation": "team-a/web", "node": "n1", "windowSeconds": 0.25,
             "resourceUsage": {"cpu": {"seconds": 1.5, "percent": 2.0}, "memory": {"rssBytes": 4194304}},
             "tasks": {"main": {"state": "Running"}}}
            """;

    @TempDir
    Path dir;

    KubectlDroverTest.ApiServer api() throws Exception {
        KubectlDroverTest host = new KubectlDroverTest();
        host.dir = dir;
        return host.new ApiServer();
    }

    @Test
    void statusAsJsonNamesWhatTheTextShows() throws Exception {
        try (KubectlDroverTest.ApiServer api = api()) {
            api.answer(ALLOC_PATH, 200, ALLOC);
            api.answer(
                    "/api/v1/namespaces/team-a/events?fieldSelector="
                            + java.net.URLEncoder.encode(
                                    "involvedObject.kind=Allocation,involvedObject.name=web",
                                    java.nio.charset.StandardCharsets.UTF_8),
                    200,
                    EVENTS);
            KubectlDroverTest.Run r =
                    KubectlDroverTest.run("status", "web", "-o", "json", "--kubeconfig", api.kubeconfig.toString());
            assertThat(r.err()).isEmpty();
            assertThat(r.exit()).isZero();
            JsonNode doc = new ObjectMapper().readTree(r.out());
            assertThat(doc.path("name").asText()).isEqualTo("web");
            assertThat(doc.path("node").asText()).isEqualTo("n1");
            assertThat(doc.path("clientStatus").asText()).isEqualTo("Running");
            assertThat(doc.path("ready").path("condition").asText()).isEqualTo("True");
            assertThat(doc.path("ready").path("mainTasksRunning").asText()).isEqualTo("1/1");
            assertThat(doc.has("previousAllocation"))
                    .as("a missing field is null, not left out")
                    .isTrue();
            assertThat(doc.path("previousAllocation").isNull()).isTrue();
            JsonNode main = doc.path("tasks").get(0);
            assertThat(main.path("name").asText()).isEqualTo("main");
            assertThat(main.path("leader").asBoolean()).isTrue();
            assertThat(main.path("inSpec").asBoolean()).isTrue();
            assertThat(main.path("state").asText()).isEqualTo("Running");
            assertThat(main.path("restarts").asInt()).isEqualTo(1);
            assertThat(main.path("events").get(0).path("type").asText())
                    .as("newest first, as the text")
                    .isEqualTo("Started");
            assertThat(main.path("events").get(1).path("exitCode").asInt()).isEqualTo(1);
            JsonNode old = doc.path("tasks").get(1);
            assertThat(old.path("name").asText()).isEqualTo("old");
            assertThat(old.path("inSpec").asBoolean())
                    .as("a task the spec dropped")
                    .isFalse();
            JsonNode event = doc.path("events").get(0);
            assertThat(event.path("reason").asText()).isEqualTo("Started");
            assertThat(event.path("count").asInt()).isEqualTo(2);
            assertThat(event.path("time").asText()).isEqualTo("2026-01-01T00:00:06Z");
            assertThat(r.out()).as("a control character is escaped by JSON").doesNotContain("\u001b");
        }
    }

    @Test
    void statsAsYamlIsTheAgentsAnswer() throws Exception {
        try (KubectlDroverTest.ApiServer api = api()) {
            api.answer(KubectlDroverTest.API + "stats", 200, STATS);
            KubectlDroverTest.Run yaml =
                    KubectlDroverTest.run("stats", "web", "--output=yaml", "--kubeconfig", api.kubeconfig.toString());
            assertThat(yaml.err()).isEmpty();
            assertThat(yaml.out()).doesNotStartWith("---");
            assertThat(new YAMLMapper().readTree(yaml.out())).isEqualTo(new ObjectMapper().readTree(STATS));
            KubectlDroverTest.Run json =
                    KubectlDroverTest.run("stats", "web", "-o", "json", "--kubeconfig", api.kubeconfig.toString());
            assertThat(new ObjectMapper().readTree(json.out())).isEqualTo(new ObjectMapper().readTree(STATS));
        }
    }

    @Test
    void anOutputFormatNotKnownIsAUsageError() {
        KubectlDroverTest.Run r = KubectlDroverTest.run("status", "web", "-o", "wide");
        assertThat(r.exit()).isEqualTo(KubectlDrover.EXIT_USAGE);
        assertThat(r.err().lines().findFirst().orElseThrow())
                .isEqualTo("kubectl drover: -o (--output) takes json or yaml, not \"wide\" (without it: text)");
        assertThat(KubectlDroverTest.run("stats", "web", "--json", "-o", "yaml").err())
                .contains("--json and -o yaml ask for different formats");
        assertThat(KubectlDroverTest.run("logs", "web", "main", "-o", "json").err())
                .contains("-o is a flag of stats, status and version, not of logs");
    }

    @Test
    void versionShowsTheClientAndTheAgentsOnTheNodes() throws Exception {
        try (KubectlDroverTest.ApiServer api = api()) {
            api.answer(VersionCommand.NODES_PATH, 200, """
                    {"kind": "PartialObjectMetadataList", "items": [
                      {"metadata": {"name": "b", "annotations": {"drover.dev/agent-version": "1.2.0",
                                                                "drover.dev/agent-revision": "abc"}}},
                      {"metadata": {"name": "a", "annotations": {"drover.dev/agent-version": "1.2.0",
                                                                "drover.dev/agent-revision": "abc"}}},
                      {"metadata": {"name": "c", "annotations": {"drover.dev/agent-version": "1.1.0",
                                                                "drover.dev/agent-revision": "def"}}},
                      {"metadata": {"name": "d", "annotations": {"drover.dev/agent-api-port": "8443"}}},
                      {"metadata": {"name": "e"}}]}
                    """);
            KubectlDroverTest.Run text = KubectlDroverTest.run("version", "--kubeconfig", api.kubeconfig.toString());
            assertThat(text.err()).isEmpty();
            assertThat(text.out())
                    .startsWith("Client Version: ")
                    .contains("Agent Versions:\n  1.2.0 (revision abc): 2 nodes (a, b)\n"
                            + "  1.1.0 (revision def): 1 node (c)\n"
                            + "  (older, publishes no version): 1 node\n");
            JsonNode doc = new ObjectMapper()
                    .readTree(KubectlDroverTest.run("version", "-o", "json", "--kubeconfig", api.kubeconfig.toString())
                            .out());
            assertThat(doc.path("client").path("version").asText()).isNotEmpty();
            assertThat(doc.path("agents").get(0).path("nodes").asInt()).isEqualTo(2);
            assertThat(doc.path("nodesWithoutVersion").asInt()).isEqualTo(1);
        }
    }

    @Test
    void versionClientAsksTheClusterNothing() throws Exception {
        KubectlDroverTest.Run r = KubectlDroverTest.run(
                "version",
                "--client",
                "-o",
                "yaml",
                "--kubeconfig",
                dir.resolve("none").toString());
        assertThat(r.err()).isEmpty();
        assertThat(r.exit()).isZero();
        JsonNode doc = new YAMLMapper().readTree(r.out());
        assertThat(doc.path("client").path("javaVersion").asText())
                .isEqualTo(Runtime.version().toString());
        assertThat(doc.has("agents")).isFalse();
    }

    @Test
    void versionWithoutReadingNodesStillShowsTheClient() throws Exception {
        try (KubectlDroverTest.ApiServer api = api()) {
            api.answer(VersionCommand.NODES_PATH, 403, """
                    {"kind": "Status", "code": 403, "message": "nodes is forbidden: User \\"u\\" cannot list"}
                    """);
            KubectlDroverTest.Run r = KubectlDroverTest.run("version", "--kubeconfig", api.kubeconfig.toString());
            assertThat(r.exit()).isEqualTo(1);
            assertThat(r.out()).startsWith("Client Version: ").doesNotContain("Agent");
            assertThat(r.err()).contains("not allowed: version needs list on nodes");
        }
    }
}
