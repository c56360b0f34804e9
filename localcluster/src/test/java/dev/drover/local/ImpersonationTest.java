package dev.drover.local;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Impersonation ({@code kubectl --as}) on the local API server: a requester allowed the {@code impersonate} verb acts
 * as whom it names, with the groups the real server gives them, and is refused with the real 403 otherwise.
 */
class ImpersonationTest {

    static final ObjectMapper JSON = new ObjectMapper();
    static LocalApiServer server;
    static KubernetesClient admin;
    static HttpClient http;
    static String helper;

    @BeforeAll
    static void start() throws Exception {
        server = LocalApiServer.start(LocalApiServer.Options.defaults());
        admin = server.client();
        http = HttpClient.newBuilder().sslContext(server.trust()).build();
        admin.resourceList("""
                        apiVersion: v1
                        kind: List
                        items:
                        - {apiVersion: v1, kind: Namespace, metadata: {name: team}}
                        - {apiVersion: v1, kind: ServiceAccount, metadata: {name: helper, namespace: team}}
                        - {apiVersion: v1, kind: ServiceAccount, metadata: {name: robot, namespace: team}}
                        - apiVersion: rbac.authorization.k8s.io/v1
                          kind: ClusterRole
                          metadata: {name: impersonator}
                          rules:
                          - {apiGroups: [""], resources: [users], verbs: [impersonate], resourceNames: [alice]}
                          - {apiGroups: [""], resources: [groups], verbs: [impersonate], resourceNames: [devs]}
                          - {apiGroups: [authentication.k8s.io], resources: [uids], verbs: [impersonate]}
                          - apiGroups: [authentication.k8s.io]
                            resources: [userextras/scopes]
                            verbs: [impersonate]
                            resourceNames: [view]
                        - apiVersion: rbac.authorization.k8s.io/v1
                          kind: ClusterRoleBinding
                          metadata: {name: impersonator}
                          roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: impersonator}
                          subjects: [{kind: ServiceAccount, name: helper, namespace: team}]
                        - apiVersion: rbac.authorization.k8s.io/v1
                          kind: Role
                          metadata: {name: robot-impersonator, namespace: team}
                          rules:
                          - {apiGroups: [""], resources: [serviceaccounts], verbs: [impersonate], resourceNames: [robot]}
                        - apiVersion: rbac.authorization.k8s.io/v1
                          kind: RoleBinding
                          metadata: {name: robot-impersonator, namespace: team}
                          roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: robot-impersonator}
                          subjects: [{kind: ServiceAccount, name: helper, namespace: team}]
                        - apiVersion: rbac.authorization.k8s.io/v1
                          kind: Role
                          metadata: {name: readers, namespace: team}
                          rules:
                          - {apiGroups: [""], resources: [configmaps], verbs: [list]}
                        - apiVersion: rbac.authorization.k8s.io/v1
                          kind: RoleBinding
                          metadata: {name: readers, namespace: team}
                          roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: readers}
                          subjects:
                          - {kind: User, name: alice}
                          - {kind: ServiceAccount, name: robot, namespace: team}
                        """).create();
        helper = admin.serviceAccounts()
                .inNamespace("team")
                .withName("helper")
                .tokenRequest(new TokenRequestBuilder()
                        .withNewSpec()
                        .withExpirationSeconds(3600L)
                        .endSpec()
                        .build())
                .getStatus()
                .getToken();
    }

    @AfterAll
    static void stop() {
        http.close();
        server.close();
    }

    /** The request as helper with {@code headers} (name, value, name, value...): its status and body. */
    static HttpResponse<String> as(String method, String path, String body, String... headers) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(server.url() + path))
                .header("Authorization", "Bearer " + helper)
                .header("Content-Type", "application/json")
                .method(
                        method,
                        body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        for (int i = 0; i < headers.length; i += 2) {
            request.header(headers[i], headers[i + 1]);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    static JsonNode whoami(String... headers) throws Exception {
        HttpResponse<String> r = as(
                "POST",
                "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                "{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"SelfSubjectReview\"}",
                headers);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
        return JSON.readTree(r.body()).path("status").path("userInfo");
    }

    static List<String> groups(JsonNode userInfo) {
        List<String> out = new ArrayList<>();
        userInfo.path("groups").forEach(g -> out.add(g.asText()));
        return out;
    }

    static String message(HttpResponse<String> r) throws Exception {
        return JSON.readTree(r.body()).path("message").asText();
    }

    @Test
    void withoutImpersonationHeadersTheRequesterActsAsItself() throws Exception {
        JsonNode me = whoami();
        assertThat(me.path("username").asText()).isEqualTo("system:serviceaccount:team:helper");
        assertThat(as("GET", "/api/v1/namespaces/team/configmaps", null).statusCode())
                .isEqualTo(403);
    }

    @Test
    void anAllowedUserImpersonationActsAsThatUserWithTheAuthenticatedGroup() throws Exception {
        JsonNode alice = whoami("Impersonate-User", "alice");
        assertThat(alice.path("username").asText()).isEqualTo("alice");
        assertThat(groups(alice)).containsExactly("system:authenticated");
        assertThat(alice.has("extra")).isFalse();

        HttpResponse<String> list = as("GET", "/api/v1/namespaces/team/configmaps", null, "Impersonate-User", "alice");
        assertThat(list.statusCode()).as(list.body()).isEqualTo(200);
    }

    @Test
    void impersonatingAUserNotAllowedIsTheRealForbidden() throws Exception {
        HttpResponse<String> r = as("GET", "/api/v1/namespaces/team/configmaps", null, "Impersonate-User", "bob");
        assertThat(r.statusCode()).isEqualTo(403);
        assertThat(message(r))
                .isEqualTo("users \"bob\" is forbidden: User \"system:serviceaccount:team:helper\" cannot impersonate"
                        + " resource \"users\" in API group \"\" at the cluster scope");
    }

    @Test
    void impersonatedGroupsReplaceTheDefaultsAndEachMustBeAllowed() throws Exception {
        JsonNode devs = whoami("Impersonate-User", "alice", "Impersonate-Group", "devs");
        assertThat(groups(devs)).containsExactly("devs", "system:authenticated");

        HttpResponse<String> r =
                as("GET", "/api/v1/namespaces", null, "Impersonate-User", "alice", "Impersonate-Group", "admins");
        assertThat(r.statusCode()).isEqualTo(403);
        assertThat(message(r))
                .isEqualTo("groups \"admins\" is forbidden: User \"system:serviceaccount:team:helper\" cannot"
                        + " impersonate resource \"groups\" in API group \"\" at the cluster scope");
    }

    @Test
    void aServiceAccountIsImpersonatedWithItsGroupsWhenAllowedInItsNamespace() throws Exception {
        JsonNode robot = whoami("Impersonate-User", "system:serviceaccount:team:robot");
        assertThat(robot.path("username").asText()).isEqualTo("system:serviceaccount:team:robot");
        assertThat(groups(robot))
                .containsExactly("system:serviceaccounts", "system:serviceaccounts:team", "system:authenticated");
        HttpResponse<String> list = as(
                "GET",
                "/api/v1/namespaces/team/configmaps",
                null,
                "Impersonate-User",
                "system:serviceaccount:team:robot");
        assertThat(list.statusCode()).as(list.body()).isEqualTo(200);

        HttpResponse<String> elsewhere =
                as("GET", "/api/v1/namespaces", null, "Impersonate-User", "system:serviceaccount:default:robot");
        assertThat(elsewhere.statusCode()).isEqualTo(403);
        assertThat(message(elsewhere))
                .isEqualTo("serviceaccounts \"robot\" is forbidden: User \"system:serviceaccount:team:helper\" cannot"
                        + " impersonate resource \"serviceaccounts\" in API group \"\" in the namespace \"default\"");
    }

    @Test
    void extrasAndUidAreImpersonatedOnlyWhereAllowed() throws Exception {
        JsonNode scoped =
                whoami("Impersonate-User", "alice", "Impersonate-Extra-Scopes", "view", "Impersonate-Uid", "1234");
        assertThat(scoped.path("uid").asText()).isEqualTo("1234");
        assertThat(scoped.path("extra").path("scopes").get(0).asText()).isEqualTo("view");

        HttpResponse<String> r =
                as("GET", "/api/v1/namespaces", null, "Impersonate-User", "alice", "Impersonate-Extra-Scopes", "edit");
        assertThat(r.statusCode()).isEqualTo(403);
        assertThat(message(r))
                .isEqualTo("userextras.authentication.k8s.io \"edit\" is forbidden: User"
                        + " \"system:serviceaccount:team:helper\" cannot impersonate resource \"userextras/scopes\" in"
                        + " API group \"authentication.k8s.io\" at the cluster scope");
    }

    @Test
    void groupsWithoutAUserAreABadRequest() throws Exception {
        HttpResponse<String> r = as("GET", "/api/v1/namespaces", null, "Impersonate-Group", "devs");
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(message(r)).isEqualTo("requested groups [devs] without impersonating a user");
    }

    @Test
    void accessReviewsAnswerForTheImpersonatedUser() throws Exception {
        String review = "{\"apiVersion\":\"authorization.k8s.io/v1\",\"kind\":\"SelfSubjectAccessReview\",\"spec\":"
                + "{\"resourceAttributes\":{\"namespace\":\"team\",\"verb\":\"list\",\"resource\":\"configmaps\"}}}";
        String path = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
        HttpResponse<String> asAlice = as("POST", path, review, "Impersonate-User", "alice");
        HttpResponse<String> asHelper = as("POST", path, review);
        assertThat(JSON.readTree(asAlice.body()).path("status").path("allowed").asBoolean())
                .as(asAlice.body())
                .isTrue();
        assertThat(JSON.readTree(asHelper.body()).path("status").path("allowed").asBoolean())
                .as(asHelper.body())
                .isFalse();
    }
}
