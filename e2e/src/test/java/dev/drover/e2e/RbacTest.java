package dev.drover.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.local.LocalApiServer;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * RBAC on the local API server, as a real cluster applies it: each identity here is a service account whose token
 * the TokenRequest API minted, granted what its bindings say and nothing more; the ways a grant could leak are
 * attacked.
 */
class RbacTest {

    static final ObjectMapper JSON = new ObjectMapper();
    static final String ALLOCS = "/apis/drover.dev/v1alpha1/namespaces/";

    @RegisterExtension
    static final LocalCluster CLUSTER = new LocalCluster("local");

    static LocalApiServer server;
    static Kubectl kubectl;
    static HttpClient http;

    @BeforeAll
    static void start() throws Exception {
        server = CLUSTER.server();
        kubectl = CLUSTER.kubectl();
        http = HttpClient.newBuilder().sslContext(server.trust()).build();
        for (String ns : List.of("team", "other")) {
            kubectl.run("create", "namespace", ns).assertOk();
        }
        apply("""
                apiVersion: rbac.authorization.k8s.io/v1
                kind: Role
                metadata: {name: alloc-reader, namespace: team}
                rules:
                - apiGroups: [drover.dev]
                  resources: [allocations]
                  verbs: [get, list, watch]
                - apiGroups: [drover.dev]
                  resources: [allocations/status]
                  verbs: [patch]
                ---
                apiVersion: rbac.authorization.k8s.io/v1
                kind: RoleBinding
                metadata: {name: reader, namespace: team}
                roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: alloc-reader}
                subjects:
                - {kind: ServiceAccount, name: reader, namespace: team}
                """);
        kubectl.run("create", "serviceaccount", "reader", "-n", "team").assertOk();
    }

    @AfterAll
    static void stop() {
        if (http != null) {
            http.close();
        }
    }

    static void apply(String yaml) {
        kubectl.runWithInput(yaml, "apply", "-f", "-").assertOk();
    }

    static String token(String namespace, String serviceAccount) {
        kubectl.run("create", "serviceaccount", serviceAccount, "-n", namespace); // may exist
        return server.client()
                .serviceAccounts()
                .inNamespace(namespace)
                .withName(serviceAccount)
                .tokenRequest(new TokenRequestBuilder().withNewSpec().endSpec().build())
                .getStatus()
                .getToken();
    }

    static HttpResponse<String> send(String token, String method, String path, String body) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(server.url() + path))
                .method(
                        method,
                        body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        request.header("Content-Type", method.equals("PATCH") ? "application/merge-patch+json" : "application/json");
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    static int status(String token, String method, String path) throws Exception {
        return send(token, method, path, null).statusCode();
    }

    static String allocation(String namespace, String name) {
        return """
                {"apiVersion":"drover.dev/v1alpha1","kind":"Allocation","metadata":{"name":"%s","namespace":"%s"},
                 "spec":{"nodeName":"local","tasks":[{"name":"t","driver":"mock"}]}}""".formatted(name, namespace);
    }

    @Test
    void aServiceAccountMayDoWhatItsRoleGrantsInItsNamespaceAndNothingElse() throws Exception {
        kubectl.runWithInput(allocation("team", "web"), "apply", "-f", "-").assertOk();
        String reader = token("team", "reader");
        assertThat(status(reader, "GET", ALLOCS + "team/allocations")).isEqualTo(200);
        assertThat(status(reader, "GET", ALLOCS + "team/allocations/web")).isEqualTo(200);
        assertThat(status(reader, "GET", ALLOCS + "team/allocations?watch=true&timeoutSeconds=1"))
                .isEqualTo(200);
        assertThat(send(reader, "PATCH", ALLOCS + "team/allocations/web/status", "{}")
                        .statusCode())
                .isEqualTo(200);

        HttpResponse<String> elsewhere = send(reader, "GET", ALLOCS + "other/allocations", null);
        assertThat(elsewhere.statusCode()).isEqualTo(403);
        JsonNode body = JSON.readTree(elsewhere.body());
        assertThat(body.path("reason").asText()).isEqualTo("Forbidden");
        assertThat(body.path("message").asText())
                .isEqualTo("allocations.drover.dev is forbidden: User \"system:serviceaccount:team:reader\" cannot"
                        + " list resource \"allocations\" in API group \"drover.dev\" in the namespace \"other\"");
        assertThat(body.path("details").path("group").asText()).isEqualTo("drover.dev");
        assertThat(body.path("details").path("kind").asText()).isEqualTo("allocations");

        HttpResponse<String> patchSpec = send(reader, "PATCH", ALLOCS + "team/allocations/web", "{}");
        assertThat(patchSpec.statusCode())
                .as("allocations/status grants no patch of the allocation")
                .isEqualTo(403);
        assertThat(JSON.readTree(patchSpec.body()).path("message").asText())
                .startsWith("allocations.drover.dev \"web\" is forbidden: User \"system:serviceaccount:team:reader\""
                        + " cannot patch resource \"allocations\"");
        assertThat(send(reader, "POST", ALLOCS + "team/allocations", allocation("team", "new"))
                        .statusCode())
                .isEqualTo(403);
        assertThat(status(reader, "DELETE", ALLOCS + "team/allocations"))
                .as("deletecollection")
                .isEqualTo(403);
        assertThat(status(reader, "GET", "/api/v1/nodes")).isEqualTo(403);
        assertThat(status(reader, "GET", "/apis"))
                .as("discovery, for every authenticated user")
                .isEqualTo(200);
    }

    @Test
    void resourceNamesGrantTheNamedObjectOnlyAndNeverAList() throws Exception {
        apply("""
                apiVersion: rbac.authorization.k8s.io/v1
                kind: ClusterRole
                metadata: {name: one-alloc}
                rules:
                - apiGroups: [drover.dev]
                  resources: [allocations]
                  resourceNames: [named]
                  verbs: [get, list, watch]
                ---
                apiVersion: rbac.authorization.k8s.io/v1
                kind: RoleBinding
                metadata: {name: one-alloc, namespace: other}
                roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: one-alloc}
                subjects:
                - {kind: ServiceAccount, name: picky, namespace: other}
                """);
        kubectl.runWithInput(allocation("other", "named"), "apply", "-f", "-").assertOk();
        kubectl.runWithInput(allocation("other", "unnamed"), "apply", "-f", "-").assertOk();
        String picky = token("other", "picky");
        assertThat(status(picky, "GET", ALLOCS + "other/allocations/named")).isEqualTo(200);
        assertThat(status(picky, "GET", ALLOCS + "other/allocations/unnamed")).isEqualTo(403);
        assertThat(status(picky, "GET", ALLOCS + "other/allocations")).isEqualTo(403);
        assertThat(status(
                        picky,
                        "GET",
                        ALLOCS + "other/allocations?watch=true&timeoutSeconds=1"
                                + "&fieldSelector=metadata.name%3Dnamed"))
                .as("a watch of the one named object, as kubectl get -w NAME does")
                .isEqualTo(200);
        assertThat(status(picky, "GET", ALLOCS + "team/allocations/named"))
                .as("a RoleBinding to a ClusterRole grants in its own namespace only")
                .isEqualTo(403);
    }

    @Test
    void aBindingToAMissingRoleGrantsNothingAndTheForbiddenMessageSaysWhy() throws Exception {
        apply("""
                apiVersion: rbac.authorization.k8s.io/v1
                kind: ClusterRoleBinding
                metadata: {name: ghostly}
                roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: ghost}
                subjects:
                - {kind: ServiceAccount, name: haunted, namespace: other}
                """);
        HttpResponse<String> answer = send(token("other", "haunted"), "GET", "/api/v1/nodes", null);
        assertThat(answer.statusCode()).isEqualTo(403);
        assertThat(JSON.readTree(answer.body()).path("message").asText())
                .isEqualTo("nodes is forbidden: User \"system:serviceaccount:other:haunted\" cannot list resource"
                        + " \"nodes\" in API group \"\" at the cluster scope: RBAC: clusterrole.rbac.authorization.k8s.io"
                        + " \"ghost\" not found");
    }

    @Test
    void anonymousCallersSeeHealthAndVersionOnly() throws Exception {
        assertThat(status(null, "GET", "/version")).isEqualTo(200);
        assertThat(status(null, "GET", "/readyz")).isEqualTo(200);
        HttpResponse<String> api = send(null, "GET", "/api", null);
        assertThat(api.statusCode()).isEqualTo(403);
        assertThat(JSON.readTree(api.body()).path("message").asText())
                .isEqualTo("forbidden: User \"system:anonymous\" cannot get path \"/api\"");
        assertThat(status(null, "GET", ALLOCS + "team/allocations")).isEqualTo(403);
    }

    @Test
    void nobodyGrantsWhatTheyDoNotHoldUnlessAllowedToEscalateOrBind() throws Exception {
        apply("""
                apiVersion: rbac.authorization.k8s.io/v1
                kind: Role
                metadata: {name: role-writer, namespace: team}
                rules:
                - apiGroups: [rbac.authorization.k8s.io]
                  resources: [roles, rolebindings]
                  verbs: [create, update, patch]
                - apiGroups: [drover.dev]
                  resources: [allocations]
                  verbs: [get]
                ---
                apiVersion: rbac.authorization.k8s.io/v1
                kind: RoleBinding
                metadata: {name: role-writer, namespace: team}
                roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: role-writer}
                subjects:
                - {kind: ServiceAccount, name: writer, namespace: team}
                """);
        String writer = token("team", "writer");
        String narrower = """
                {"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"getter","namespace":"team"},
                 "rules":[{"apiGroups":["drover.dev"],"resources":["allocations"],"verbs":["get"]}]}""";
        assertThat(send(writer, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/team/roles", narrower)
                        .statusCode())
                .isEqualTo(201);
        String wider = """
                {"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"deleter","namespace":"team"},
                 "rules":[{"apiGroups":["drover.dev"],"resources":["allocations"],"verbs":["get","delete"]}]}""";
        HttpResponse<String> escalation =
                send(writer, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/team/roles", wider);
        assertThat(escalation.statusCode()).isEqualTo(403);
        assertThat(JSON.readTree(escalation.body()).path("message").asText())
                .contains("is attempting to grant RBAC permissions not currently held")
                .contains("delete");
        String toAdmin = """
                {"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"me-admin","namespace":"team"},
                 "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cluster-admin"},
                 "subjects":[{"kind":"ServiceAccount","name":"writer","namespace":"team"}]}""";
        assertThat(send(writer, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/team/rolebindings", toAdmin)
                        .statusCode())
                .as("binding a role it does not hold")
                .isEqualTo(403);

        apply("""
                apiVersion: rbac.authorization.k8s.io/v1
                kind: Role
                metadata: {name: escalator, namespace: team}
                rules:
                - apiGroups: [rbac.authorization.k8s.io]
                  resources: [roles]
                  verbs: [escalate]
                ---
                apiVersion: rbac.authorization.k8s.io/v1
                kind: RoleBinding
                metadata: {name: escalator, namespace: team}
                roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: escalator}
                subjects:
                - {kind: ServiceAccount, name: writer, namespace: team}
                """);
        assertThat(send(writer, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/team/roles", wider)
                        .statusCode())
                .as("with escalate on roles")
                .isEqualTo(201);
    }

    @Test
    void aBindingsRoleRefCannotChange() {
        var changed = kubectl.runWithInput("""
                apiVersion: rbac.authorization.k8s.io/v1
                kind: RoleBinding
                metadata: {name: reader, namespace: team}
                roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}
                subjects:
                - {kind: ServiceAccount, name: reader, namespace: team}
                """, "apply", "-f", "-");
        assertThat(changed.exitCode()).isNotZero();
        assertThat(changed.err()).contains("cannot change roleRef");
    }

    @Test
    void anAggregatedClusterRoleHasTheRulesOfTheRolesItSelects() throws Exception {
        apply("""
                apiVersion: rbac.authorization.k8s.io/v1
                kind: ClusterRole
                metadata: {name: monitoring}
                aggregationRule:
                  clusterRoleSelectors:
                  - matchLabels: {example.com/aggregate-to-monitoring: "true"}
                rules: []
                ---
                apiVersion: rbac.authorization.k8s.io/v1
                kind: ClusterRole
                metadata:
                  name: monitoring-nodes
                  labels: {example.com/aggregate-to-monitoring: "true"}
                rules:
                - {apiGroups: [""], resources: [nodes], verbs: [list]}
                ---
                apiVersion: rbac.authorization.k8s.io/v1
                kind: ClusterRoleBinding
                metadata: {name: monitoring}
                roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: monitoring}
                subjects:
                - {kind: ServiceAccount, name: monitor, namespace: other}
                """);
        String monitor = token("other", "monitor");
        assertThat(status(monitor, "GET", "/api/v1/nodes")).isEqualTo(200);
        assertThat(status(monitor, "GET", "/api/v1/namespaces")).isEqualTo(403);
    }

    @Test
    void kubectlAuthCanIAnswersFromTheSameRules() {
        String reader = token("team", "reader");
        assertThat(kubectl.run("--token", reader, "auth", "can-i", "list", "allocations.drover.dev", "-n", "team")
                        .out()
                        .strip())
                .isEqualTo("yes");
        var no = kubectl.run("--token", reader, "auth", "can-i", "delete", "allocations.drover.dev", "-n", "team");
        assertThat(no.out().strip()).isEqualTo("no");
        assertThat(no.exitCode()).isEqualTo(1);
        assertThat(kubectl.run("auth", "can-i", "*", "*").out().strip())
                .as("the administrator")
                .isEqualTo("yes");
        String list = kubectl.run("--token", reader, "auth", "can-i", "--list", "-n", "team")
                .assertOk()
                .out();
        assertThat(list).contains("allocations.drover.dev").contains("[get list watch]");
    }
}
