package dev.drover.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.drover.local.AgentIdentity;
import dev.drover.local.LocalApiServer;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The chart's EndpointSlice policy ({@code drover-agent-endpointslices}) and RBAC, applied as a real install applies
 * them ({@link AgentIdentity}), tried with the token of node a's agent: it may create, update and delete slices
 * managed by {@code agent.drover.dev} whose endpoints all name node a, in namespaces labelled
 * {@code drover.dev/workloads: enabled}, and no other slice.
 */
class EndpointSliceConfinementTest {

    @RegisterExtension
    static final LocalCluster CLUSTER = new LocalCluster("a", "b");

    static final ObjectMapper JSON = new ObjectMapper();
    static final String POLICY = "ValidatingAdmissionPolicy 'drover-agent-endpointslices' with binding"
            + " 'drover-agent-endpointslices' denied request: ";
    static final String NOT_OWN = "the Drover agent of node a may write only EndpointSlices labelled"
            + " endpointslice.kubernetes.io/managed-by=agent.drover.dev whose endpoints (one at least) all name its"
            + " node (nodeName a)";
    static final String SLICES = "/apis/discovery.k8s.io/v1/namespaces/";

    static LocalApiServer server;
    static KubernetesClient admin;
    static String agentA;

    @BeforeAll
    static void install() {
        server = CLUSTER.server();
        admin = server.client();
        AgentIdentity identity = AgentIdentity.install(server, AgentKubeconfig.CHART);
        String user = identity.username();
        agentA = identity.mint(user.substring(user.lastIndexOf(':') + 1), "a", null)
                .token();
        namespace("workloads", Map.of("drover.dev/workloads", "enabled"));
        namespace("plain", Map.of());
    }

    static void namespace(String name, Map<String, String> labels) {
        admin.namespaces()
                .resource(new NamespaceBuilder()
                        .withNewMetadata()
                        .withName(name)
                        .withLabels(labels)
                        .endMetadata()
                        .build())
                .create();
    }

    /** A slice of Service web, managed by {@code manager} (null: no label), with one endpoint per node named. */
    static ObjectNode slice(String name, String manager, String... nodes) {
        ObjectNode slice = JSON.createObjectNode();
        slice.put("apiVersion", "discovery.k8s.io/v1").put("kind", "EndpointSlice");
        ObjectNode labels = slice.putObject("metadata").put("name", name).putObject("labels");
        labels.put("kubernetes.io/service-name", "web");
        if (manager != null) {
            labels.put("endpointslice.kubernetes.io/managed-by", manager);
        }
        slice.put("addressType", "IPv4");
        ArrayNode endpoints = slice.putArray("endpoints");
        for (String node : nodes) {
            ObjectNode e = endpoints.addObject();
            e.putArray("addresses").add("10.0.0.7");
            e.put("nodeName", node);
        }
        slice.putArray("ports")
                .addObject()
                .put("name", "http")
                .put("port", 20001)
                .put("protocol", "TCP");
        return slice;
    }

    static HttpResponse<String> send(String method, String path, JsonNode body) throws Exception {
        try (HttpClient http =
                HttpClient.newBuilder().sslContext(server.trust()).build()) {
            return http.send(
                    HttpRequest.newBuilder(URI.create(server.url() + path))
                            .header("Authorization", "Bearer " + agentA)
                            .header("Content-Type", "application/json")
                            .method(
                                    method,
                                    body == null
                                            ? HttpRequest.BodyPublishers.noBody()
                                            : HttpRequest.BodyPublishers.ofString(body.toString()))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
        }
    }

    static HttpResponse<String> create(String namespace, ObjectNode slice) throws Exception {
        return send("POST", SLICES + namespace + "/endpointslices", slice);
    }

    static HttpResponse<String> update(String namespace, ObjectNode slice) throws Exception {
        HttpResponse<String> current = send(
                "GET",
                SLICES + namespace + "/endpointslices/"
                        + slice.path("metadata").path("name").asText(),
                null);
        assertThat(current.statusCode()).as(current.body()).isEqualTo(200);
        ((ObjectNode) slice.get("metadata"))
                .put(
                        "resourceVersion",
                        JSON.readTree(current.body())
                                .path("metadata")
                                .path("resourceVersion")
                                .asText());
        return send(
                "PUT",
                SLICES + namespace + "/endpointslices/"
                        + slice.path("metadata").path("name").asText(),
                slice);
    }

    static HttpResponse<String> delete(String namespace, String name) throws Exception {
        return send("DELETE", SLICES + namespace + "/endpointslices/" + name, null);
    }

    /** Creates {@code slice} as the administrator: what another node's agent or Kubernetes wrote. */
    static void existing(String namespace, ObjectNode slice) {
        admin.resource(JSON.convertValue(slice, io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice.class))
                .inNamespace(namespace)
                .create();
    }

    static void refused(HttpResponse<String> response, String message) throws Exception {
        assertThat(response.statusCode()).as(response.body()).isEqualTo(403);
        JsonNode status = JSON.readTree(response.body());
        assertThat(status.path("reason").asText()).isEqualTo("Forbidden");
        assertThat(status.path("message").asText()).isEqualTo(POLICY + message);
    }

    @Test
    void agentWritesTheSlicesOfItsOwnNode() throws Exception {
        HttpResponse<String> created = create("workloads", slice("web-own", "agent.drover.dev", "a"));
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        HttpResponse<String> updated = update("workloads", slice("web-own", "agent.drover.dev", "a", "a"));
        assertThat(updated.statusCode()).as(updated.body()).isEqualTo(200);
        HttpResponse<String> listed = send(
                "GET",
                "/apis/discovery.k8s.io/v1/endpointslices?labelSelector=endpointslice.kubernetes.io/managed-by%3D"
                        + "agent.drover.dev",
                null);
        assertThat(listed.statusCode()).as("it lists its slices at start").isEqualTo(200);
        HttpResponse<String> deleted = delete("workloads", "web-own");
        assertThat(deleted.statusCode()).as(deleted.body()).isEqualTo(200);
    }

    @Test
    void agentCannotWriteASliceNamingAnotherNode() throws Exception {
        refused(create("workloads", slice("web-b", "agent.drover.dev", "b")), NOT_OWN);
        refused(create("workloads", slice("web-ab", "agent.drover.dev", "a", "b")), NOT_OWN);
        refused(create("workloads", slice("web-none", "agent.drover.dev")), NOT_OWN);

        assertThat(create("workloads", slice("web-moved", "agent.drover.dev", "a"))
                        .statusCode())
                .isEqualTo(201);
        refused(update("workloads", slice("web-moved", "agent.drover.dev", "b")), NOT_OWN);

        existing("workloads", slice("web-of-b", "agent.drover.dev", "b"));
        refused(update("workloads", slice("web-of-b", "agent.drover.dev", "a")), NOT_OWN);
        refused(delete("workloads", "web-of-b"), NOT_OWN);
    }

    @Test
    void agentCannotWriteASliceWithoutTheManagedByLabel() throws Exception {
        refused(create("workloads", slice("web-unmanaged", null, "a")), NOT_OWN);
        refused(create("workloads", slice("web-kube", "endpointslice-controller.k8s.io", "a")), NOT_OWN);

        existing("workloads", slice("web-controller", "endpointslice-controller.k8s.io", "a"));
        refused(update("workloads", slice("web-controller", "agent.drover.dev", "a")), NOT_OWN);
        refused(delete("workloads", "web-controller"), NOT_OWN);
    }

    @Test
    void agentCannotWriteASliceInANamespaceWithoutTheLabel() throws Exception {
        String unlabelled = "the Drover agent may write EndpointSlices only in namespaces labelled"
                + " drover.dev/workloads=enabled: label namespace %s drover.dev/workloads=enabled to let Drover"
                + " publish allocations into its Services";
        refused(create("plain", slice("web-own", "agent.drover.dev", "a")), unlabelled.formatted("plain"));
        refused(create("default", slice("kubernetes", "agent.drover.dev", "a")), unlabelled.formatted("default"));
        refused(
                create(AgentIdentity.NAMESPACE, slice("web-own", "agent.drover.dev", "a")),
                "the Drover agent may not write EndpointSlices in Drover's own namespace " + AgentIdentity.NAMESPACE);
    }
}
