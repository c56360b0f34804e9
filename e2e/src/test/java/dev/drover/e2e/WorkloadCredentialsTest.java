package dev.drover.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.credentials.CredentialException;
import dev.drover.credentials.CredentialException.Reason;
import dev.drover.credentials.ObjectRef;
import dev.drover.credentials.ServiceAccountToken;
import dev.drover.kube.KubeCredentials;
import dev.drover.local.LocalApiServer;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An agent's credentials for its workloads against the local API server, which authenticates ServiceAccount tokens
 * and applies RBAC as kube-apiserver does. The agent here is a ServiceAccount that may read Nodes and mint tokens,
 * and may not read Secrets or ConfigMaps: every read must be the workload's, with what its own Role grants.
 */
class WorkloadCredentialsTest {

    static final ObjectMapper JSON = new ObjectMapper();
    static final String NODE = "local";

    @RegisterExtension
    static final LocalCluster CLUSTER = new LocalCluster(NODE);

    static LocalApiServer server;
    static Kubectl kubectl;
    static HttpClient http;
    static KubernetesClient agentClient;
    static KubeCredentials credentials;

    @BeforeAll
    static void start() throws Exception {
        server = CLUSTER.server();
        kubectl = CLUSTER.kubectl();
        http = HttpClient.newBuilder().sslContext(server.trust()).build();
        apply("""
                apiVersion: v1
                kind: Namespace
                metadata: {name: team}
                ---
                apiVersion: v1
                kind: ServiceAccount
                metadata: {name: web, namespace: team}
                ---
                apiVersion: v1
                kind: Secret
                metadata: {name: db, namespace: team}
                stringData: {password: "s3cret\\n"}
                ---
                apiVersion: v1
                kind: Secret
                metadata: {name: other, namespace: team}
                stringData: {password: not-yours}
                ---
                apiVersion: v1
                kind: ConfigMap
                metadata: {name: app, namespace: team}
                data: {app.conf: "port=80"}
                binaryData: {logo.bin: AAH/}
                ---
                apiVersion: rbac.authorization.k8s.io/v1
                kind: Role
                metadata: {name: web-reads, namespace: team}
                rules:
                - apiGroups: [""]
                  resources: [secrets]
                  resourceNames: [db, later]
                  verbs: [get]
                - apiGroups: [""]
                  resources: [configmaps]
                  resourceNames: [app]
                  verbs: [get]
                ---
                apiVersion: rbac.authorization.k8s.io/v1
                kind: RoleBinding
                metadata: {name: web-reads, namespace: team}
                roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: web-reads}
                subjects:
                - {kind: ServiceAccount, name: web, namespace: team}
                ---
                apiVersion: v1
                kind: Namespace
                metadata: {name: agents}
                ---
                apiVersion: v1
                kind: ServiceAccount
                metadata: {name: agent, namespace: agents}
                ---
                apiVersion: v1
                kind: ServiceAccount
                metadata: {name: no-minting, namespace: agents}
                ---
                apiVersion: rbac.authorization.k8s.io/v1
                kind: ClusterRole
                metadata: {name: agent}
                rules:
                - apiGroups: [""]
                  resources: [nodes]
                  verbs: [get]
                - apiGroups: [""]
                  resources: [serviceaccounts/token]
                  verbs: [create]
                ---
                apiVersion: rbac.authorization.k8s.io/v1
                kind: ClusterRole
                metadata: {name: node-reader}
                rules:
                - apiGroups: [""]
                  resources: [nodes]
                  verbs: [get]
                ---
                apiVersion: rbac.authorization.k8s.io/v1
                kind: ClusterRoleBinding
                metadata: {name: agent}
                roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: agent}
                subjects:
                - {kind: ServiceAccount, name: agent, namespace: agents}
                ---
                apiVersion: rbac.authorization.k8s.io/v1
                kind: ClusterRoleBinding
                metadata: {name: no-minting}
                roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: node-reader}
                subjects:
                - {kind: ServiceAccount, name: no-minting, namespace: agents}
                """);
        agentClient = clientAs("agents", "agent");
        credentials = KubeCredentials.forNode(agentClient, NODE);
    }

    @AfterAll
    static void stop() {
        if (credentials != null) {
            credentials.close();
        }
        if (agentClient != null) {
            agentClient.close();
        }
        if (http != null) {
            http.close();
        }
    }

    static void apply(String yaml) {
        kubectl.runWithInput(yaml, "apply", "-f", "-").assertOk();
    }

    /** A client of the local server authenticated as ServiceAccount {@code name}, as an agent's would be. */
    static KubernetesClient clientAs(String namespace, String name) {
        String token = server.client()
                .serviceAccounts()
                .inNamespace(namespace)
                .withName(name)
                .tokenRequest(new TokenRequestBuilder().withNewSpec().endSpec().build())
                .getStatus()
                .getToken();
        return new KubernetesClientBuilder()
                .withHttpClientFactory(new JdkHttpClientFactory())
                .withConfig(new ConfigBuilder(server.clientConfig())
                        .withOauthToken(token)
                        .build())
                .build();
    }

    static JsonNode whoAmI(String token) throws Exception {
        HttpResponse<String> answer = http.send(
                HttpRequest.newBuilder(URI.create(server.url() + "/apis/authentication.k8s.io/v1/selfsubjectreviews"))
                        .POST(HttpRequest.BodyPublishers.ofString(
                                "{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"SelfSubjectReview\"}"))
                        .header("Authorization", "Bearer " + token)
                        .header("Content-Type", "application/json")
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(201);
        return JSON.readTree(answer.body()).path("status").path("userInfo");
    }

    static CredentialException failure(Attempt attempt) {
        try {
            attempt.run();
        } catch (CredentialException e) {
            return e;
        }
        throw new AssertionError("it did not fail");
    }

    interface Attempt {
        void run() throws CredentialException;
    }

    static String text(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }

    @Test
    void aMintedTokenIsTheServiceAccountsAndBoundToTheAgentsNode() throws Exception {
        Instant before = Instant.now();
        ServiceAccountToken minted = credentials.token("team", "web", null, 3600);

        JsonNode user = whoAmI(minted.token());
        assertThat(user.path("username").asText()).isEqualTo("system:serviceaccount:team:web");
        assertThat(user.path("extra")
                        .path("authentication.kubernetes.io/node-name")
                        .get(0)
                        .asText())
                .isEqualTo(NODE);
        assertThat(user.path("extra")
                        .path("authentication.kubernetes.io/node-uid")
                        .get(0)
                        .asText())
                .isEqualTo(server.client()
                        .nodes()
                        .withName(NODE)
                        .get()
                        .getMetadata()
                        .getUid());
        assertThat(minted.expiry())
                .isBetween(before.plusSeconds(3599), Instant.now().plusSeconds(3601));
        assertThat(minted.toString()).doesNotContain(minted.token());
    }

    @Test
    void aTokenForAnotherAudienceIsNotTakenByTheApiServer() throws Exception {
        String vaults = credentials.token("team", "web", "vault", 600).token();

        CredentialException e =
                failure(() -> credentials.read(new ObjectRef(ObjectRef.Kind.Secret, "team", "db"), vaults));

        assertThat(e.reason()).isEqualTo(Reason.FORBIDDEN);
    }

    @Test
    void aWorkloadReadsWhatItsRoleGrantsWithItsOwnToken() throws Exception {
        String token = credentials.token("team", "web", null, 600).token();

        Map<String, byte[]> secret = credentials.read(new ObjectRef(ObjectRef.Kind.Secret, "team", "db"), token);
        Map<String, byte[]> config = credentials.read(new ObjectRef(ObjectRef.Kind.ConfigMap, "team", "app"), token);

        assertThat(secret).containsOnlyKeys("password");
        assertThat(text(secret.get("password"))).isEqualTo("s3cret\n");
        assertThat(config).containsOnlyKeys("app.conf", "logo.bin");
        assertThat(text(config.get("app.conf"))).isEqualTo("port=80");
        assertThat(config.get("logo.bin")).containsExactly(0, 1, 0xff);
    }

    @Test
    void aSecretTheWorkloadsRoleDoesNotNameIsForbiddenThoughTheAgentCouldMintForIt() {
        String token = mint("web");

        CredentialException e =
                failure(() -> credentials.read(new ObjectRef(ObjectRef.Kind.Secret, "team", "other"), token));

        assertThat(e.reason()).isEqualTo(Reason.FORBIDDEN);
        assertThat(e.getMessage())
                .contains("Secret team/other")
                .contains("secrets \"other\" is forbidden: User \"system:serviceaccount:team:web\" cannot get"
                        + " resource \"secrets\"")
                .doesNotContain(token)
                .doesNotContain("not-yours");
    }

    @Test
    void theAgentItselfMayNotReadSecrets() {
        // what keeps a workload to its own grants: were the agent's credentials sent, this would be allowed
        assertThatThrownBy(() ->
                        agentClient.secrets().inNamespace("team").withName("db").get())
                .as("the agent can read Secrets itself")
                .isInstanceOfSatisfying(
                        KubernetesClientException.class,
                        e -> assertThat(e.getCode()).isEqualTo(403));
    }

    @Test
    void aMissingObjectTheRoleGrantsIsNotFound() {
        String token = mint("web");

        CredentialException e =
                failure(() -> credentials.read(new ObjectRef(ObjectRef.Kind.Secret, "team", "later"), token));

        assertThat(e.reason()).isEqualTo(Reason.NOT_FOUND);
        assertThat(e.getMessage()).startsWith("Secret team/later not found");
    }

    @Test
    void aTokenNobodyIssuedIsForbidden() {
        String forged = mint("web").replaceAll(".{8}$", "AAAAAAAA");

        for (String token : List.of("garbage", forged)) {
            CredentialException e =
                    failure(() -> credentials.read(new ObjectRef(ObjectRef.Kind.Secret, "team", "db"), token));
            assertThat(e.reason()).isEqualTo(Reason.FORBIDDEN);
            assertThat(e.getMessage()).doesNotContain(token);
        }
    }

    @Test
    void tokensDieWithTheirNode() throws Exception {
        server.client()
                .nodes()
                .resource(new NodeBuilder()
                        .withNewMetadata()
                        .withName("doomed")
                        .endMetadata()
                        .build())
                .create();
        try (KubeCredentials doomed = KubeCredentials.forNode(agentClient, "doomed")) {
            String token = doomed.token("team", "web", null, 600).token();
            ObjectRef db = new ObjectRef(ObjectRef.Kind.Secret, "team", "db");
            assertThat(doomed.read(db, token)).containsKey("password");

            server.client().nodes().withName("doomed").delete();

            CredentialException e = failure(() -> doomed.read(db, token));
            assertThat(e.reason()).isEqualTo(Reason.FORBIDDEN);
        }
    }

    @Test
    void mintingFailuresSayWhatIsWrong() throws Exception {
        CredentialException missing = failure(() -> credentials.token("team", "nobody", null, 600));
        assertThat(missing.reason()).isEqualTo(Reason.NOT_FOUND);
        assertThat(missing.getMessage()).contains("ServiceAccount team/nobody not found");

        CredentialException tooShort = failure(() -> credentials.token("team", "web", null, 60));
        assertThat(tooShort.reason()).isEqualTo(Reason.INVALID);
        assertThat(tooShort.getMessage()).contains("10 minutes");

        try (KubernetesClient client = clientAs("agents", "no-minting");
                KubeCredentials refused = KubeCredentials.forNode(client, NODE)) {
            CredentialException e = failure(() -> refused.token("team", "web", null, 600));
            assertThat(e.reason()).isEqualTo(Reason.FORBIDDEN);
            assertThat(e.getMessage())
                    .contains("User \"system:serviceaccount:agents:no-minting\" cannot create resource"
                            + " \"serviceaccounts/token\"");
        }
    }

    @Test
    void aWorkloadTokenLivesAsLongAsAsked() throws Exception {
        ServiceAccountToken minted = credentials.token("team", "web", null, 1200);

        assertThat(Duration.between(Instant.now(), minted.expiry()))
                .isBetween(Duration.ofSeconds(1100), Duration.ofSeconds(1201));
    }

    static String mint(String serviceAccount) {
        try {
            return credentials.token("team", serviceAccount, null, 600).token();
        } catch (CredentialException e) {
            throw new AssertionError(e);
        }
    }
}
