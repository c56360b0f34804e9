package dev.drover.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.local.AgentIdentity;
import dev.drover.local.LocalApiServer;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The chart's node confinement policies, applied as a real install applies them ({@link AgentIdentity}), attacked
 * with the token of node a's agent: it may write its own Node, the Allocations bound to a and the Events it reports
 * as a, each only as far as the agent needs, and nothing of node b's.
 */
class NodeConfinementTest {

    @RegisterExtension
    static final LocalCluster CLUSTER = new LocalCluster("a", "b");

    @TempDir
    static Path dir;

    static LocalApiServer server;
    static Kubectl admin;
    /** kubectl as node a's agent, with the token AgentIdentity mints for it (bound to its Pod on node a). */
    static Kubectl agentA;

    static String agentToken;

    @BeforeAll
    static void install() throws Exception {
        server = CLUSTER.server();
        admin = CLUSTER.kubectl();
        Path kubeconfig = dir.resolve("agent-a.kubeconfig");
        AgentIdentity.install(server, AgentKubeconfig.CHART).writeKubeconfig("a", kubeconfig);
        agentA = new Kubectl(kubeconfig);
        Matcher token = Pattern.compile("token: \"([^\"]+)\"").matcher(Files.readString(kubeconfig));
        assertThat(token.find()).isTrue();
        agentToken = token.group(1);
    }

    @BeforeEach
    void allocations() {
        for (String node : new String[] {"a", "b"}) {
            admin.runWithInput("""
                            apiVersion: drover.dev/v1alpha1
                            kind: Allocation
                            metadata:
                              name: on-%1$s
                              namespace: default
                              labels: {team: x}
                              finalizers: [drover.dev/finalizer]
                            spec:
                              nodeName: %1$s
                              tasks:
                              - {name: t, driver: mock}
                            """.formatted(node), "apply", "-f", "-").assertOk();
        }
    }

    static void refused(Kubectl.Result result, String policy, String message) {
        assertThat(result.exitCode()).as(result.out()).isNotZero();
        assertThat(result.err())
                .contains("ValidatingAdmissionPolicy 'drover-agent-" + policy + "' with binding 'drover-agent-" + policy
                        + "' denied request: " + message);
    }

    /**
     * Merge-patches the status of Node or Allocation {@code name} with {@code token} straight away (kubectl patch
     * --subresource reads the object first, which the agent's RBAC does not allow, as the agent never does).
     */
    static Kubectl.Result patchStatus(String token, String resource, String name, String patch) throws Exception {
        return patch(
                token,
                resource.equals("node")
                        ? "/api/v1/nodes/" + name + "/status"
                        : "/apis/drover.dev/v1alpha1/namespaces/default/allocations/" + name + "/status",
                patch);
    }

    /** Merge-patches Event {@code name} in default with {@code token}, unread, as the agent's EventPoster does. */
    static Kubectl.Result patchEvent(String token, String name, String patch) throws Exception {
        return patch(token, "/api/v1/namespaces/default/events/" + name, patch);
    }

    static Kubectl.Result patch(String token, String path, String patch) throws Exception {
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

    @Test
    void anotherNodesNodeIsRefused() throws Exception {
        refused(
                patchStatus(
                        agentToken,
                        "node",
                        "b",
                        "{\"metadata\":{\"annotations\":{\"drover.dev/agent-api-port\":\"1\"}}}"),
                "nodes",
                "the Drover agent of node a may write its own Node only, not b");
    }

    @Test
    void itsOwnNodeTakesDroverLabelsAnnotationsAndResourcesOnly() throws Exception {
        patchStatus(agentToken, "node", "a", """
                        {"metadata": {"labels": {"drover.dev/gpu.count": "1"},
                                      "annotations": {"drover.dev/agent-api-port": "10346"}},
                         "status": {"capacity": {"drover.dev/nvidia-gpu": "1"},
                                    "allocatable": {"drover.dev/nvidia-gpu": "1"}}}
                        """).assertOk();
        assertThat(admin.run("get", "node", "a", "-o", "jsonpath={.status.allocatable.drover\\.dev/nvidia-gpu}")
                        .assertOk()
                        .out())
                .isEqualTo("1");
        refused(
                patchStatus(
                        agentToken,
                        "node",
                        "a",
                        "{\"metadata\":{\"labels\":{\"node-role.kubernetes.io/control-plane\":\"\"}}}"),
                "nodes",
                "the Drover agent may change only drover.dev/ labels of its Node");
        refused(
                patchStatus(agentToken, "node", "a", "{\"metadata\":{\"annotations\":{\"team\":\"x\"}}}"),
                "nodes",
                "the Drover agent may change only drover.dev/ annotations of its Node");
        refused(
                patchStatus(agentToken, "node", "a", "{\"status\":{\"capacity\":{\"cpu\":\"1000\"}}}"),
                "nodes",
                "the Drover agent may change only drover.dev/ resources in its Node's capacity and allocatable");
        refused(
                patchStatus(
                        agentToken,
                        "node",
                        "a",
                        "{\"status\":{\"addresses\":[{\"type\":\"InternalIP\",\"address\":\"10.9.9.9\"}]}}"),
                "nodes",
                "the Drover agent may change only drover.dev/ capacity and allocatable in its Node's status");
        // the runtime handlers (1.30) and features (1.31) a node reports are the kubelet's to say
        refused(
                patchStatus(
                        agentToken,
                        "node",
                        "a",
                        "{\"status\":{\"runtimeHandlers\":[{\"name\":\"kata\",\"features\":{\"recursiveReadOnlyMounts\":true}}]}}"),
                "nodes",
                "the Drover agent may change only drover.dev/ capacity and allocatable in its Node's status");
        refused(
                patchStatus(agentToken, "node", "a", "{\"status\":{\"features\":{\"supplementalGroupsPolicy\":true}}}"),
                "nodes",
                "the Drover agent may change only drover.dev/ capacity and allocatable in its Node's status");
    }

    @Test
    void anotherNodesAllocationIsRefusedWhateverTheWrite() throws Exception {
        String notItsNode = "the Drover agent of node a may write only the Allocations bound to its node";
        refused(
                patchStatus(agentToken, "alloc", "on-b", "{\"status\":{\"clientStatus\":\"Failed\"}}"),
                "allocations",
                notItsNode);
        refused(
                agentA.run(
                        "patch",
                        "alloc",
                        "on-b",
                        "--type=merge",
                        "-p",
                        "{\"spec\":{\"tasks\":[{\"name\":\"t\",\"driver\":\"raw_exec\",\"config\":{\"command\":\"/bin/sh\"}}]}}"),
                "allocations",
                notItsNode);
        refused(
                agentA.run(
                        "patch",
                        "alloc",
                        "on-b",
                        "--type=json",
                        "-p",
                        "[{\"op\":\"remove\",\"path\":\"/metadata/finalizers/0\"}]"),
                "allocations",
                notItsNode);
        refused(agentA.run("annotate", "alloc", "on-b", "drover.dev/disk-claimed-by=a"), "allocations", notItsNode);
        assertThat(admin.run("get", "alloc", "on-b", "-o", "jsonpath={.metadata.finalizers} {.spec.tasks[0].driver}")
                        .assertOk()
                        .out())
                .isEqualTo("[\"drover.dev/finalizer\"] mock");
    }

    @Test
    void itsOwnAllocationTakesStatusAndItsFinalizerOnly() throws Exception {
        patchStatus(agentToken, "alloc", "on-a", "{\"status\":{\"clientStatus\":\"Running\"}}")
                .assertOk();
        // the agent's own removal: a JSON patch that tests the entry is its finalizer, then removes it
        agentA.run(
                        "patch",
                        "alloc",
                        "on-a",
                        "--type=json",
                        "-p",
                        "[{\"op\":\"test\",\"path\":\"/metadata/finalizers/0\",\"value\":\"drover.dev/finalizer\"},"
                                + "{\"op\":\"remove\",\"path\":\"/metadata/finalizers/0\"}]")
                .assertOk();
        agentA.run(
                        "patch",
                        "alloc",
                        "on-a",
                        "--type=merge",
                        "-p",
                        "{\"metadata\":{\"finalizers\":[\"drover.dev/finalizer\"]}}")
                .assertOk();
        refused(
                agentA.run(
                        "patch",
                        "alloc",
                        "on-a",
                        "--type=merge",
                        "-p",
                        "{\"spec\":{\"tasks\":[{\"name\":\"t\",\"driver\":\"raw_exec\",\"config\":{\"command\":\"/bin/sh\"}}]}}"),
                "allocations",
                "the Drover agent may not change an Allocation's spec");
        refused(
                agentA.run("label", "alloc", "on-a", "team=y", "--overwrite"),
                "allocations",
                "the Drover agent may not change an Allocation's labels, annotations or owner references");
        refused(
                agentA.run(
                        "patch",
                        "alloc",
                        "on-a",
                        "--type=merge",
                        "-p",
                        "{\"metadata\":{\"finalizers\":[\"drover.dev/finalizer\",\"example.com/keep\"]}}"),
                "allocations",
                "the Drover agent may add or remove only its own finalizer (drover.dev/finalizer) on an Allocation");
        assertThat(admin.run("get", "alloc", "on-a", "-o", "jsonpath={.status.clientStatus} {.metadata.labels.team}")
                        .assertOk()
                        .out())
                .isEqualTo("Running x");
    }

    static String event(String name, String kind, String apiVersion, String about, String host) {
        return """
                apiVersion: v1
                kind: Event
                metadata: {name: %s, namespace: default}
                involvedObject: {kind: %s, apiVersion: %s, name: %s, namespace: default}
                reason: Started
                message: Task t started
                type: Normal
                count: 1
                source: {component: drover-agent, host: %s}
                reportingComponent: drover.dev/agent
                reportingInstance: %s
                """.formatted(name, kind, apiVersion, about, host, host);
    }

    @Test
    void itsEventsAreAboutAllocationsOrItsNodeAndReportedAsItsNode() throws Exception {
        agentA.runWithInput(event("on-a.1", "Allocation", "drover.dev/v1alpha1", "on-a", "a"), "create", "-f", "-")
                .assertOk();
        patchEvent(agentToken, "on-a.1", "{\"count\":2}").assertOk();
        refused(
                agentA.runWithInput(event("about-b", "Node", "v1", "b", "a"), "create", "-f", "-"),
                "events",
                "the Drover agent of node a may record Events about Allocations and its own Node only");
        refused(
                agentA.runWithInput(
                        event("as-b", "Allocation", "drover.dev/v1alpha1", "on-b", "b"), "create", "-f", "-"),
                "events",
                "the Drover agent of node a must report its Events as its node");
        admin.runWithInput(event("by-b", "Allocation", "drover.dev/v1alpha1", "on-b", "b"), "create", "-f", "-")
                .assertOk();
        refused(
                patchEvent(agentToken, "by-b", "{\"count\":9,\"source\":{\"host\":\"a\"},\"reportingInstance\":\"a\"}"),
                "events",
                "the Drover agent of node a may change only the Events its node reported");
    }

    @Test
    void aTokenThatNamesNoNodeIsRefusedWithTheReason() throws Exception {
        String token = server.client()
                .serviceAccounts()
                .inNamespace(AgentIdentity.NAMESPACE)
                .withName(AgentIdentity.RELEASE)
                .tokenRequest(new TokenRequestBuilder().withNewSpec().endSpec().build())
                .getStatus()
                .getToken();
        refused(
                patchStatus(token, "alloc", "on-a", "{\"status\":{\"clientStatus\":\"Running\"}}"),
                "allocations",
                "the Drover agent's token names no node");
    }

    @Test
    void theAdministratorIsNotConfined() throws Exception {
        admin.run("annotate", "node", "b", "team=x", "--overwrite").assertOk();
        admin.run("label", "alloc", "on-b", "team=z", "--overwrite").assertOk();
        patchStatus(LocalApiServer.ADMIN_TOKEN, "alloc", "on-b", "{\"status\":{\"clientStatus\":\"Failed\"}}")
                .assertOk();
        admin.runWithInput(event("admin-about-b", "Node", "v1", "b", "somewhere"), "create", "-f", "-")
                .assertOk();
    }
}
