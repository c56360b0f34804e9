package dev.drover.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code pods/resize} as a client sees it: authorized and admitted as its own subresource, and not served at all
 * before 1.33.
 */
class PodResizeSubresourceTest {

    private static final String POD = """
            {"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},
             "spec":{"containers":[{"name":"c","image":"pause",
               "resources":{"requests":{"cpu":"100m","memory":"64Mi"}}}]}}""";

    private static final String RESIZE = """
            [{"op":"replace","path":"/spec/containers/0/resources/requests/cpu","value":"200m"}]""";

    static HttpResponse<String> send(
            LocalApiServer server, String method, String path, String body, String type, String... headers)
            throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(server.url().resolve(path))
                .header("Authorization", "Bearer " + LocalApiServer.ADMIN_TOKEN)
                .method(
                        method,
                        body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (type != null) {
            b.header("Content-Type", type);
        }
        if (headers.length > 0) {
            b.headers(headers);
        }
        return HttpClient.newBuilder()
                .sslContext(server.trust())
                .build()
                .send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aServerActingAs132ServesNoResizeAsARealOneAnswersAnUnknownSubresource() throws Exception {
        try (LocalApiServer server = LocalApiServer.start(LocalApiServer.Options.defaults())) {
            assertThat(send(server, "POST", "/api/v1/namespaces/default/pods", POD, "application/json")
                            .statusCode())
                    .isEqualTo(201);
            HttpResponse<String> patch = send(
                    server, "PATCH", "/api/v1/namespaces/default/pods/p/resize", RESIZE, "application/json-patch+json");
            assertThat(patch.statusCode()).isEqualTo(404);
            assertThat(send(server, "GET", "/api/v1/namespaces/default/pods/p/resize", null, null)
                            .statusCode())
                    .isEqualTo(404);
            assertThat(send(server, "GET", "/api/v1", null, null).body()).doesNotContain("pods/resize");
        }
    }

    @Test
    void resizingNeedsTheResizeSubresourceInRbacAndMeetsThePoliciesForIt() throws Exception {
        try (LocalApiServer server =
                LocalApiServer.start(LocalApiServer.Options.defaults().withKubeVersion("1.33"))) {
            server.client().resourceList("""
                            apiVersion: v1
                            kind: List
                            items:
                            - apiVersion: rbac.authorization.k8s.io/v1
                              kind: Role
                              metadata: {name: pod-editor, namespace: default}
                              rules:
                              - {apiGroups: [""], resources: [pods], verbs: [get, patch, update]}
                            - apiVersion: rbac.authorization.k8s.io/v1
                              kind: RoleBinding
                              metadata: {name: pod-editor, namespace: default}
                              roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: pod-editor}
                              subjects: [{kind: User, name: alice}]
                            - apiVersion: admissionregistration.k8s.io/v1
                              kind: ValidatingAdmissionPolicy
                              metadata: {name: no-big-resize}
                              spec:
                                matchConstraints:
                                  resourceRules:
                                  - {apiGroups: [""], apiVersions: [v1], operations: [UPDATE], resources: [pods/resize]}
                                validations:
                                - expression: "object.spec.containers[0].resources.requests['cpu'] != '300m'"
                                  message: no 300m
                            - apiVersion: admissionregistration.k8s.io/v1
                              kind: ValidatingAdmissionPolicyBinding
                              metadata: {name: no-big-resize}
                              spec: {policyName: no-big-resize, validationActions: [Deny]}
                            """).serverSideApply();
            send(server, "POST", "/api/v1/namespaces/default/pods", POD, "application/json");

            HttpResponse<String> asAlice = send(
                    server,
                    "PATCH",
                    "/api/v1/namespaces/default/pods/p/resize",
                    RESIZE,
                    "application/json-patch+json",
                    "Impersonate-User",
                    "alice");
            assertThat(asAlice.statusCode()).isEqualTo(403);
            assertThat(asAlice.body())
                    .contains("User \\\"alice\\\" cannot patch resource \\\"pods/resize\\\" in API group \\\"\\\" in"
                            + " the namespace \\\"default\\\"");

            HttpResponse<String> resized = send(
                    server, "PATCH", "/api/v1/namespaces/default/pods/p/resize", RESIZE, "application/json-patch+json");
            assertThat(resized.statusCode()).isEqualTo(200);
            assertThat(resized.body()).contains("\"cpu\":\"200m\"");

            HttpResponse<String> denied = send(
                    server,
                    "PATCH",
                    "/api/v1/namespaces/default/pods/p/resize",
                    RESIZE.replace("200m", "300m"),
                    "application/json-patch+json");
            assertThat(denied.body()).contains("denied request: no 300m");
            assertThat(send(server, "GET", "/api/v1", null, null).body()).contains("pods/resize");
            // the policy is for resizes only: the same change to the Pod itself is not its business
            assertThat(send(
                                    server,
                                    "PATCH",
                                    "/api/v1/namespaces/default/pods/p",
                                    RESIZE.replace("200m", "300m"),
                                    "application/json-patch+json")
                            .statusCode())
                    .isEqualTo(200);
        }
    }

    @Test
    void versionsUpTo136AreServedAnd137IsRefusedSayingWhich() {
        assertThat(KubeVersion.parse("1.35").podResize()).isTrue();
        assertThat(KubeVersion.parse("1.36").podResize())
                .as("1.36 keeps what 1.35 has")
                .isTrue();
        assertThat(KubeVersion.parse("1.36").podObservedGeneration()).isTrue();
        assertThat(KubeVersion.parse("1.36").mutatingAdmissionPolicies()).isTrue();
        assertThat(KubeVersion.parse("1.35").mutatingAdmissionPolicies()).isFalse();
        assertThat(KubeVersion.DEFAULT.minor()).isEqualTo(32);
        assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> KubeVersion.parse("1.37")))
                .hasMessage("Kubernetes 1.37 is not one this server acts as: 1.25 to 1.36");
        assertThat(List.of(LocalCommandLine.KUBE_VERSION.help()))
                .singleElement()
                .asString()
                .contains("1.25 to 1.36", "default 1.32");
    }
}
