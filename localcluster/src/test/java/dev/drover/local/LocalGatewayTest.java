package dev.drover.local;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The chart's gateway on the local cluster, reached through the API server as a user reaches it: discovery, the
 * API server's own 403 for a user without the right, the gateway's answer for one with it, and the gateway's own
 * token refused by the API server.
 */
class LocalGatewayTest {

    static final ObjectMapper JSON = new ObjectMapper();
    static final String LOG = "/apis/agent.drover.dev/v1alpha1/namespaces/default/allocations/nothing/log?task=web";

    @TempDir
    static Path dir;

    static LocalApiServer server;
    static LocalGateway gateway;
    static HttpClient http;

    @BeforeAll
    static void start() throws Exception {
        server = LocalApiServer.start(LocalApiServer.Options.defaults().withNodes(List.of("local")));
        gateway = AgentIdentity.install(server, Charts.locate()).startGateway(dir.resolve("gateway"));
        http = HttpClient.newBuilder().sslContext(server.trust()).build();
        for (String sa : List.of("reader", "stranger")) {
            server.client()
                    .serviceAccounts()
                    .inNamespace("default")
                    .resource(new ServiceAccountBuilder()
                            .withNewMetadata()
                            .withName(sa)
                            .endMetadata()
                            .build())
                    .create();
        }
        server.client().resource("""
                        apiVersion: rbac.authorization.k8s.io/v1
                        kind: Role
                        metadata: {name: log-reader, namespace: default}
                        rules:
                        - {apiGroups: [agent.drover.dev], resources: [allocations/log], verbs: [get]}
                        """).create();
        server.client().resource("""
                        apiVersion: rbac.authorization.k8s.io/v1
                        kind: RoleBinding
                        metadata: {name: log-reader, namespace: default}
                        roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: log-reader}
                        subjects:
                        - {kind: ServiceAccount, name: reader, namespace: default}
                        """).create();
    }

    @AfterAll
    static void stop() {
        if (http != null) {
            http.close();
        }
        if (gateway != null) {
            gateway.close();
        }
        if (server != null) {
            server.close();
        }
    }

    static String token(String sa) {
        return server.client()
                .serviceAccounts()
                .inNamespace("default")
                .withName(sa)
                .tokenRequest(new TokenRequestBuilder().withNewSpec().endSpec().build())
                .getStatus()
                .getToken();
    }

    static HttpResponse<String> get(String token, String path) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create(server.url() + path))
                        .header("Authorization", "Bearer " + token)
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void discoveryReachesTheGateway() throws Exception {
        HttpResponse<String> r = get(token("stranger"), "/apis/agent.drover.dev/v1alpha1");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(JSON.readTree(r.body()).findValuesAsText("name"))
                .containsExactly(
                        "allocations/log",
                        "allocations/stats",
                        "allocations/snapshot",
                        "allocations/signal",
                        "allocations/exec");
    }

    @Test
    void aUserWithoutTheGrantGetsTheApiServersForbidden() throws Exception {
        HttpResponse<String> r = get(token("stranger"), LOG);
        assertThat(r.statusCode()).isEqualTo(403);
        JsonNode status = JSON.readTree(r.body());
        assertThat(status.path("reason").asText()).isEqualTo("Forbidden");
        assertThat(status.path("message").asText()).contains("allocations/log");
    }

    @Test
    void aUserWithTheGrantIsAnsweredByTheGateway() throws Exception {
        HttpResponse<String> r = get(token("reader"), LOG);
        // the gateway looked the allocation up (as itself) after checking the reader's right
        assertThat(r.statusCode()).isEqualTo(404);
        assertThat(JSON.readTree(r.body()).path("message").asText()).contains("allocation default/nothing not found");
    }

    @Test
    void theGatewaysTokenForAgentsIsRefusedByTheApiServer() throws Exception {
        String peer = Files.readString(gateway.peerTokenFile()).trim();
        HttpResponse<String> r = get(peer, "/apis/agent.drover.dev/v1alpha1");
        assertThat(r.statusCode()).isEqualTo(401);
    }
}
