package dev.drover.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.local.AgentIdentity;
import dev.drover.local.LocalApiServer;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.NonDeletingOperation;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The chart's token policy ({@code drover-agent-tokens}), applied as a real install applies it ({@link
 * AgentIdentity}), attacked with the token of node a's agent: it may mint a token of a ServiceAccount in a namespace
 * labelled {@code drover.dev/workloads: enabled}, bound to Node a, for audiences other than the agents' own, a day
 * long at most, and nothing else; everyone else is left alone; and a token bound to a Node dies with it.
 */
class TokenConfinementTest {

    @RegisterExtension
    static final LocalCluster CLUSTER = new LocalCluster("a", "b");

    static final ObjectMapper JSON = new ObjectMapper();
    static final String POLICY =
            "ValidatingAdmissionPolicy 'drover-agent-tokens' with binding 'drover-agent-tokens'" + " denied request: ";

    static LocalApiServer server;
    static KubernetesClient admin;
    static AgentIdentity identity;
    /** Node a's agent's own token, as AgentIdentity mints it (bound to Node a, for the API server). */
    static String agentA;

    @BeforeAll
    static void install() {
        server = CLUSTER.server();
        admin = server.client();
        identity = AgentIdentity.install(server, AgentKubeconfig.CHART);
        agentA = identity.mint(agentAccount(), "a", null).token();
        namespace("workloads", Map.of("drover.dev/workloads", "enabled"));
        namespace("plain", Map.of());
        namespace("half", Map.of("drover.dev/workloads", "disabled"));
        // even labelled, Drover's own namespace (its agent's and gateway's accounts) stays out of reach
        admin.namespaces()
                .withName(AgentIdentity.NAMESPACE)
                .edit(n -> new NamespaceBuilder(n)
                        .editMetadata()
                        .addToLabels("drover.dev/workloads", "enabled")
                        .endMetadata()
                        .build());
        // the app's account may read its Secret; the agent itself may not
        admin.secrets()
                .inNamespace("workloads")
                .resource(new SecretBuilder()
                        .withNewMetadata()
                        .withName("db")
                        .endMetadata()
                        .addToStringData("password", "s3cret")
                        .build())
                .create();
        admin.rbac()
                .roles()
                .inNamespace("workloads")
                .resource(new RoleBuilder()
                        .withNewMetadata()
                        .withName("read-db")
                        .endMetadata()
                        .addNewRule()
                        .withApiGroups("")
                        .withResources("secrets")
                        .withResourceNames("db")
                        .withVerbs("get")
                        .endRule()
                        .build())
                .create();
        admin.rbac()
                .roleBindings()
                .inNamespace("workloads")
                .resource(new RoleBindingBuilder()
                        .withNewMetadata()
                        .withName("app-reads-db")
                        .endMetadata()
                        .withNewRoleRef()
                        .withApiGroup("rbac.authorization.k8s.io")
                        .withKind("Role")
                        .withName("read-db")
                        .endRoleRef()
                        .addNewSubject()
                        .withKind("ServiceAccount")
                        .withName("app")
                        .withNamespace("workloads")
                        .endSubject()
                        .build())
                .create();
    }

    static String agentAccount() {
        String user = identity.username();
        return user.substring(user.lastIndexOf(':') + 1);
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
        admin.serviceAccounts()
                .inNamespace(name)
                .resource(new ServiceAccountBuilder()
                        .withNewMetadata()
                        .withName("app")
                        .endMetadata()
                        .build())
                .createOr(NonDeletingOperation::update);
    }

    /** The spec of a token request bound to Node {@code node} (null: bound to nothing). */
    static String spec(String node, String audiences, long seconds) {
        String bound = node == null
                ? ""
                : ", \"boundObjectRef\": {\"apiVersion\": \"v1\", \"kind\": \"Node\", \"name\": \"" + node + "\"}";
        return "{\"apiVersion\": \"authentication.k8s.io/v1\", \"kind\": \"TokenRequest\", \"spec\": {\"audiences\": "
                + audiences + ", \"expirationSeconds\": " + seconds + bound + "}}";
    }

    static HttpResponse<String> send(String token, String method, String path, String body) throws Exception {
        try (HttpClient http =
                HttpClient.newBuilder().sslContext(server.trust()).build()) {
            return http.send(
                    HttpRequest.newBuilder(URI.create(server.url() + path))
                            .header("Authorization", "Bearer " + token)
                            .header("Content-Type", "application/json")
                            .method(
                                    method,
                                    body == null
                                            ? HttpRequest.BodyPublishers.noBody()
                                            : HttpRequest.BodyPublishers.ofString(body))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
        }
    }

    static HttpResponse<String> mint(String token, String namespace, String account, String spec) throws Exception {
        return send(token, "POST", "/api/v1/namespaces/" + namespace + "/serviceaccounts/" + account + "/token", spec);
    }

    static void refused(HttpResponse<String> response, String message) throws Exception {
        assertThat(response.statusCode()).as(response.body()).isEqualTo(403);
        JsonNode status = JSON.readTree(response.body());
        assertThat(status.path("reason").asText()).isEqualTo("Forbidden");
        assertThat(status.path("message").asText()).isEqualTo(POLICY + message);
    }

    @Test
    void anAgentMintsForAWorkloadInALabelledNamespaceBoundToItsNodeAndReadsWithThatTokenOnly() throws Exception {
        HttpResponse<String> minted = mint(agentA, "workloads", "app", spec("a", "[]", 86400));
        assertThat(minted.statusCode()).as(minted.body()).isEqualTo(201);
        JsonNode answer = JSON.readTree(minted.body());
        assertThat(answer.path("spec").path("expirationSeconds").asLong()).isEqualTo(86400);
        String token = answer.path("status").path("token").asText();

        HttpResponse<String> secret = send(token, "GET", "/api/v1/namespaces/workloads/secrets/db", null);
        assertThat(secret.statusCode()).as(secret.body()).isEqualTo(200);
        assertThat(send(agentA, "GET", "/api/v1/namespaces/workloads/secrets/db", null)
                        .statusCode())
                .as("the agent's own rights read no Secret")
                .isEqualTo(403);
        JsonNode who = JSON.readTree(send(
                                token,
                                "POST",
                                "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                                "{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"SelfSubjectReview\"}")
                        .body())
                .path("status")
                .path("userInfo");
        assertThat(who.path("username").asText()).isEqualTo("system:serviceaccount:workloads:app");
        assertThat(who.path("extra")
                        .path("authentication.kubernetes.io/node-name")
                        .toString())
                .isEqualTo("[\"a\"]");
    }

    @Test
    void aNamespaceNotLabelledForDroverWorkloadsIsRefusedWithWhatToDo() throws Exception {
        refused(
                mint(agentA, "plain", "app", spec("a", "[]", 3600)),
                "the Drover agent may request tokens only for ServiceAccounts in namespaces labelled"
                        + " drover.dev/workloads=enabled: label namespace plain drover.dev/workloads=enabled to let"
                        + " Drover run workloads with tokens there");
        refused(
                mint(agentA, "half", "app", spec("a", "[]", 3600)),
                "the Drover agent may request tokens only for ServiceAccounts in namespaces labelled"
                        + " drover.dev/workloads=enabled: label namespace half drover.dev/workloads=enabled to let"
                        + " Drover run workloads with tokens there");
        refused(
                mint(agentA, "kube-system", "default", spec("a", "[]", 3600)),
                "the Drover agent may request tokens only for ServiceAccounts in namespaces labelled"
                        + " drover.dev/workloads=enabled: label namespace kube-system drover.dev/workloads=enabled to"
                        + " let Drover run workloads with tokens there");
        refused(
                mint(agentA, AgentIdentity.NAMESPACE, agentAccount(), spec("a", "[]", 3600)),
                "the Drover agent may not request tokens for the ServiceAccounts of Drover's own namespace"
                        + " drover-system: run allocations that use tokens in another namespace");
    }

    @Test
    void aTokenNotBoundToTheAgentsOwnNodeIsRefused() throws Exception {
        String notBound = "the Drover agent of node a may request only tokens bound to its own Node"
                + " (spec.boundObjectRef: apiVersion v1, kind Node, name a), so that they stop working with the node";
        refused(mint(agentA, "workloads", "app", spec("b", "[]", 3600)), notBound);
        refused(mint(agentA, "workloads", "app", spec(null, "[]", 3600)), notBound);
        refused(
                mint(
                        agentA,
                        "workloads",
                        "app",
                        "{\"spec\": {\"boundObjectRef\": {\"apiVersion\": \"v1\", \"kind\": \"Secret\", \"name\":"
                                + " \"db\"}}}"),
                notBound);
    }

    @Test
    void aNamespaceMayNameTheOnlyServiceAccountsDroverMintsFor() throws Exception {
        namespace("listed", Map.of("drover.dev/workloads", "enabled"));
        admin.namespaces()
                .withName("listed")
                .edit(n -> new NamespaceBuilder(n)
                        .editMetadata()
                        .addToAnnotations("drover.dev/service-accounts", "web, app")
                        .endMetadata()
                        .build());
        admin.serviceAccounts()
                .inNamespace("listed")
                .resource(new ServiceAccountBuilder()
                        .withNewMetadata()
                        .withName("deployer")
                        .endMetadata()
                        .build())
                .create();
        assertThat(mint(agentA, "listed", "app", spec("a", "[\"vault\"]", 3600)).statusCode())
                .as("a listed account")
                .isEqualTo(201);
        refused(
                mint(agentA, "listed", "deployer", spec("a", "[\"vault\"]", 3600)),
                "the Drover agent may request tokens in namespace listed only for the ServiceAccounts its annotation"
                        + " drover.dev/service-accounts lists, not deployer: add it there to let Drover run allocations"
                        + " as it");
    }

    @Test
    void theAgentsAudienceAndLongLivesAreRefused() throws Exception {
        refused(
                mint(agentA, "workloads", "app", spec("a", "[\"drover.dev/agent\"]", 3600)),
                "the Drover agent may not request a token for audience drover.dev/agent, which the Drover agents' own"
                        + " API accepts: a task must never hold a token that agents take");
        refused(
                mint(agentA, "workloads", "app", spec("a", "[\"vault\"]", 2 * 86400)),
                "the Drover agent may request tokens that live a day at most (spec.expirationSeconds up to 86400)");
        assertThat(mint(agentA, "workloads", "app", spec("a", "[\"vault\"]", 3600))
                        .statusCode())
                .as("one audience of its own is fine")
                .isEqualTo(201);
        assertThat(mint(agentA, "workloads", "app", spec("a", "[\"vault\", \"https://kubernetes.default.svc\"]", 3600))
                        .statusCode())
                .as("so are several (an API server with several --api-audiences defaults to all of them)")
                .isEqualTo(201);
    }

    @Test
    void othersAreNotConfinedButNeedTheRightToMint() throws Exception {
        String anything = spec(null, "[\"drover.dev/agent\", \"vault\"]", 2 * 86400);
        // the administrator (as a controller or the kubelet with its own rights) is not the agent
        assertThat(mint(server.clientConfig().getOauthToken(), "plain", "app", anything)
                        .statusCode())
                .isEqualTo(201);
        // a ServiceAccount without the right is stopped by authorization, before admission
        String app = JSON.readTree(
                        mint(agentA, "workloads", "app", spec("a", "[]", 3600)).body())
                .path("status")
                .path("token")
                .asText();
        HttpResponse<String> denied = mint(app, "workloads", "app", spec("a", "[]", 3600));
        assertThat(denied.statusCode()).isEqualTo(403);
        assertThat(JSON.readTree(denied.body()).path("message").asText())
                .contains("cannot create resource \"serviceaccounts/token\"")
                .doesNotContain("ValidatingAdmissionPolicy");
    }

    @Test
    void aTokenBoundToANodeStopsWorkingWhenTheNodeIsDeleted() throws Exception {
        admin.nodes()
                .resource(new NodeBuilder()
                        .withNewMetadata()
                        .withName("c")
                        .endMetadata()
                        .build())
                .create();
        String agentC = identity.mint(agentAccount(), "c", null).token();
        HttpResponse<String> minted = mint(agentC, "workloads", "app", spec("c", "[]", 3600));
        assertThat(minted.statusCode()).as(minted.body()).isEqualTo(201);
        String token = JSON.readTree(minted.body()).path("status").path("token").asText();
        assertThat(send(token, "GET", "/api/v1/namespaces/workloads/secrets/db", null)
                        .statusCode())
                .isEqualTo(200);

        admin.nodes().withName("c").delete();
        assertThat(send(token, "GET", "/api/v1/namespaces/workloads/secrets/db", null)
                        .statusCode())
                .as("the workload's token died with its node")
                .isEqualTo(401);
        assertThat(send(agentC, "GET", "/api", null).statusCode())
                .as("and so did that agent's")
                .isEqualTo(401);
    }
}
