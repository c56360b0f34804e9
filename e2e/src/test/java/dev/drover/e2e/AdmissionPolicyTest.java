package dev.drover.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.local.LocalApiServer;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * ValidatingAdmissionPolicies on the local API server, applied with kubectl and enforced on every user: one with
 * params and a message expression, and the kind a node agent needs, which keeps a node's identity (its token's
 * {@code authentication.kubernetes.io/node-name}) to its own Node.
 */
class AdmissionPolicyTest {

    @RegisterExtension
    static final LocalCluster CLUSTER = new LocalCluster("local", "other");

    static LocalApiServer server;
    static Kubectl kubectl;

    @BeforeAll
    static void start() throws Exception {
        server = CLUSTER.server();
        kubectl = CLUSTER.kubectl();
    }

    static void apply(String yaml) {
        kubectl.runWithInput(yaml, "apply", "-f", "-").assertOk();
    }

    @Test
    void aPolicyWithParamsRefusesWhatItsExpressionRefusesForTheAdministratorToo() {
        apply("""
                apiVersion: v1
                kind: ConfigMap
                metadata: {name: task-limit, namespace: default}
                data: {max: "1"}
                ---
                apiVersion: admissionregistration.k8s.io/v1
                kind: ValidatingAdmissionPolicy
                metadata: {name: few-tasks}
                spec:
                  failurePolicy: Fail
                  paramKind: {apiVersion: v1, kind: ConfigMap}
                  matchConstraints:
                    resourceRules:
                    - apiGroups: [drover.dev]
                      apiVersions: ["*"]
                      operations: [CREATE, UPDATE]
                      resources: [allocations]
                  variables:
                  - {name: tasks, expression: "object.spec.tasks.size()"}
                  validations:
                  - expression: "variables.tasks <= int(params.data.max)"
                    messageExpression: "'at most ' + params.data.max + ' task(s), not ' + string(variables.tasks)"
                ---
                apiVersion: admissionregistration.k8s.io/v1
                kind: ValidatingAdmissionPolicyBinding
                metadata: {name: few-tasks-default}
                spec:
                  policyName: few-tasks
                  validationActions: [Deny]
                  paramRef: {name: task-limit, namespace: default}
                  matchResources:
                    namespaceSelector:
                      matchLabels: {kubernetes.io/metadata.name: default}
                """);
        kubectl.run("label", "namespace", "default", "kubernetes.io/metadata.name=default", "--overwrite")
                .assertOk();
        String two = """
                apiVersion: drover.dev/v1alpha1
                kind: Allocation
                metadata: {name: two, namespace: default}
                spec:
                  nodeName: local
                  tasks:
                  - {name: a, driver: mock}
                  - {name: b, driver: mock}
                """;
        var refused = kubectl.runWithInput(two, "apply", "-f", "-");
        assertThat(refused.exitCode()).isNotZero();
        assertThat(refused.err())
                .contains("ValidatingAdmissionPolicy 'few-tasks' with binding 'few-tasks-default' denied request:"
                        + " at most 1 task(s), not 2");
        kubectl.runWithInput(two.replace("  - {name: b, driver: mock}\n", ""), "apply", "-f", "-")
                .assertOk();
        kubectl.run("delete", "validatingadmissionpolicybinding", "few-tasks-default")
                .assertOk();
        kubectl.runWithInput(two, "apply", "-f", "-").assertOk();
    }

    @Test
    void aNodeIdentityMayWriteOnlyItsOwnNodesStatus() throws Exception {
        apply("""
                apiVersion: admissionregistration.k8s.io/v1
                kind: ValidatingAdmissionPolicy
                metadata: {name: own-node-only}
                spec:
                  failurePolicy: Fail
                  matchConstraints:
                    resourceRules:
                    - apiGroups: [""]
                      apiVersions: [v1]
                      operations: [UPDATE]
                      resources: [nodes/status]
                  matchConditions:
                  - name: node-identity
                    expression: "'authentication.kubernetes.io/node-name' in request.userInfo.extra"
                  validations:
                  - expression: "request.userInfo.extra['authentication.kubernetes.io/node-name'][0] == request.name"
                    message: a node's identity may write its own Node only
                    reason: Forbidden
                ---
                apiVersion: admissionregistration.k8s.io/v1
                kind: ValidatingAdmissionPolicyBinding
                metadata: {name: own-node-only}
                spec:
                  policyName: own-node-only
                  validationActions: [Deny]
                ---
                apiVersion: rbac.authorization.k8s.io/v1
                kind: ClusterRole
                metadata: {name: node-status-writer}
                rules:
                - {apiGroups: [""], resources: [nodes/status], verbs: [patch]}
                ---
                apiVersion: rbac.authorization.k8s.io/v1
                kind: ClusterRoleBinding
                metadata: {name: node-status-writer}
                roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: node-status-writer}
                subjects:
                - {kind: ServiceAccount, name: agent, namespace: default}
                """);
        kubectl.run("create", "serviceaccount", "agent").assertOk();
        String token = server.client()
                .serviceAccounts()
                .inNamespace("default")
                .withName("agent")
                .tokenRequest(new TokenRequestBuilder()
                        .withNewSpec()
                        .withNewBoundObjectRef()
                        .withApiVersion("v1")
                        .withKind("Node")
                        .withName("local")
                        .endBoundObjectRef()
                        .endSpec()
                        .build())
                .getStatus()
                .getToken();
        try (HttpClient http =
                HttpClient.newBuilder().sslContext(server.trust()).build()) {
            HttpResponse<String> own = patchStatus(http, token, "local");
            assertThat(own.statusCode()).as(own.body()).isEqualTo(200);
            HttpResponse<String> other = patchStatus(http, token, "other");
            assertThat(other.statusCode()).isEqualTo(403);
            assertThat(other.body())
                    .contains("ValidatingAdmissionPolicy 'own-node-only' with binding 'own-node-only' denied request:"
                            + " a node's identity may write its own Node only");
            assertThat(patchStatus(http, LocalApiServer.ADMIN_TOKEN, "other").statusCode())
                    .as("the administrator has no node identity: the match condition leaves it out")
                    .isEqualTo(200);
        }
    }

    @Test
    void admissionSeesWhatTheWriteCanChangeNotWhatTheRequestSent() throws Exception {
        apply("""
                apiVersion: admissionregistration.k8s.io/v1
                kind: ValidatingAdmissionPolicy
                metadata: {name: frozen}
                spec:
                  failurePolicy: Fail
                  matchConstraints:
                    resourceRules:
                    - apiGroups: [drover.dev]
                      apiVersions: ["*"]
                      operations: [UPDATE]
                      resources: [allocations, allocations/status]
                  matchConditions:
                  - {name: this-one, expression: "request.name == 'frozen'"}
                  validations:
                  - expression: "object.spec == oldObject.spec"
                    message: the spec is frozen
                  - expression: >-
                      request.subResource == 'status' || (has(object.status) == has(oldObject.status)
                      && (!has(object.status) || object.status == oldObject.status))
                    message: the status is written through /status only
                ---
                apiVersion: admissionregistration.k8s.io/v1
                kind: ValidatingAdmissionPolicyBinding
                metadata: {name: frozen}
                spec:
                  policyName: frozen
                  validationActions: [Deny]
                ---
                apiVersion: drover.dev/v1alpha1
                kind: Allocation
                metadata: {name: frozen, namespace: default}
                spec:
                  nodeName: local
                  tasks:
                  - {name: a, driver: mock}
                """);
        try (HttpClient http =
                HttpClient.newBuilder().sslContext(server.trust()).build()) {
            String path = "/apis/drover.dev/v1alpha1/namespaces/default/allocations/frozen";
            String both = "{\"spec\":{\"tasks\":[{\"name\":\"a\",\"driver\":\"mock\"},"
                    + "{\"name\":\"b\",\"driver\":\"mock\"}]},\"status\":{\"clientStatus\":\"Running\"}}";
            HttpResponse<String> status = patch(http, path + "/status", both);
            assertThat(status.statusCode())
                    .as("a status write cannot change the spec, so the policy sees the old one: %s", status.body())
                    .isEqualTo(200);
            HttpResponse<String> main =
                    patch(http, path, "{\"metadata\":{\"labels\":{\"a\":\"b\"}}," + both.substring(1));
            assertThat(main.statusCode()).isEqualTo(422);
            assertThat(main.body())
                    .as("the spec change reaches admission through the main resource")
                    .contains(
                            "ValidatingAdmissionPolicy 'frozen' with binding 'frozen' denied request: the spec is frozen");
            HttpResponse<String> labelAndStatus = patch(
                    http, path, "{\"metadata\":{\"labels\":{\"a\":\"b\"}},\"status\":{\"clientStatus\":\"Failed\"}}");
            assertThat(labelAndStatus.statusCode())
                    .as("the main resource keeps the status, so the policy sees the old one: %s", labelAndStatus.body())
                    .isEqualTo(200);
        }
        var stored = kubectl.run(
                "get",
                "alloc",
                "frozen",
                "-o",
                "jsonpath={.spec.tasks[*].name} {.status.clientStatus} {.metadata.labels.a}");
        stored.assertOk();
        assertThat(stored.out()).isEqualTo("a Running b");
    }

    @Test
    void aVariableThatFailsFailsTheValidationThatUsesIt() {
        apply("""
                apiVersion: admissionregistration.k8s.io/v1
                kind: ValidatingAdmissionPolicy
                metadata: {name: broken-variable}
                spec:
                  failurePolicy: Fail
                  matchConstraints:
                    resourceRules:
                    - apiGroups: [""]
                      apiVersions: [v1]
                      operations: [CREATE]
                      resources: [configmaps]
                  variables:
                  - {name: owner, expression: "object.data.owner"}
                  validations:
                  - expression: "variables.owner != ''"
                    message: an owner is required
                ---
                apiVersion: admissionregistration.k8s.io/v1
                kind: ValidatingAdmissionPolicyBinding
                metadata: {name: broken-variable}
                spec:
                  policyName: broken-variable
                  validationActions: [Deny]
                """);
        try {
            var refused = kubectl.run("create", "configmap", "no-owner", "--from-literal=a=b");
            assertThat(refused.exitCode()).isNotZero();
            assertThat(refused.err())
                    .as("a failed variable is no null that passes the check")
                    .contains(
                            "ValidatingAdmissionPolicy 'broken-variable' with binding 'broken-variable' denied request:"
                                    + " expression 'variables.owner != ''' resulted in error: variable 'owner' resulted in error");
            kubectl.run("create", "configmap", "owned", "--from-literal=owner=me")
                    .assertOk();
        } finally {
            kubectl.run("delete", "validatingadmissionpolicybinding", "broken-variable")
                    .assertOk();
        }
    }

    static HttpResponse<String> patch(HttpClient http, String path, String mergePatch) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create(server.url() + path))
                        .header("Authorization", "Bearer " + LocalApiServer.ADMIN_TOKEN)
                        .header("Content-Type", "application/merge-patch+json")
                        .method("PATCH", HttpRequest.BodyPublishers.ofString(mergePatch))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    static HttpResponse<String> patchStatus(HttpClient http, String token, String node) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create(server.url() + "/api/v1/nodes/" + node + "/status"))
                        .header("Authorization", "Bearer " + token)
                        .header("Content-Type", "application/merge-patch+json")
                        .method(
                                "PATCH",
                                HttpRequest.BodyPublishers.ofString("{\"metadata\":{\"annotations\":{\"a\":\"b\"}}}"))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
