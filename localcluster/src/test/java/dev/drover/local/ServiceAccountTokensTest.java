package dev.drover.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenRequest;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Service-account tokens on the local API server, as the TokenRequest API issues them and the server's
 * authenticator and TokenReview check them: each way a token can stop proving someone is attacked here.
 */
class ServiceAccountTokensTest {

    static final ObjectMapper JSON = new ObjectMapper();
    static LocalApiServer server;
    static KubernetesClient admin;

    @BeforeAll
    static void start() throws Exception {
        server = LocalApiServer.start(LocalApiServer.Options.defaults().withNodes(List.of("n1", "n2")));
        admin = server.client();
        admin.namespaces()
                .resource(new NamespaceBuilder()
                        .withNewMetadata()
                        .withName("team")
                        .endMetadata()
                        .build())
                .create();
        admin.serviceAccounts()
                .inNamespace("team")
                .resource(new ServiceAccountBuilder()
                        .withNewMetadata()
                        .withName("robot")
                        .endMetadata()
                        .build())
                .create();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    static TokenRequest mint(String sa, String node, List<String> audiences, long seconds) {
        TokenRequestBuilder request = new TokenRequestBuilder()
                .withNewSpec()
                .withAudiences(audiences)
                .withExpirationSeconds(seconds)
                .endSpec();
        if (node != null) {
            request.editSpec()
                    .withNewBoundObjectRef()
                    .withApiVersion("v1")
                    .withKind("Node")
                    .withName(node)
                    .endBoundObjectRef()
                    .endSpec();
        }
        return admin.serviceAccounts().inNamespace("team").withName(sa).tokenRequest(request.build());
    }

    static TokenReview review(String token, String... audiences) {
        return admin.tokenReviews()
                .create(new TokenReviewBuilder()
                        .withNewSpec()
                        .withToken(token)
                        .withAudiences(audiences)
                        .endSpec()
                        .build());
    }

    /** GET path with the token; the status code and body. */
    static HttpResponse<String> call(String token, String path) throws Exception {
        try (HttpClient http =
                HttpClient.newBuilder().sslContext(server.trust()).build()) {
            return http.send(
                    HttpRequest.newBuilder(URI.create(server.url() + path))
                            .header("Authorization", "Bearer " + token)
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
        }
    }

    static JsonNode whoami(String token) throws Exception {
        try (HttpClient http =
                HttpClient.newBuilder().sslContext(server.trust()).build()) {
            String body = http.send(
                            HttpRequest.newBuilder(URI.create(
                                            server.url() + "/apis/authentication.k8s.io/v1/selfsubjectreviews"))
                                    .header("Authorization", "Bearer " + token)
                                    .header("Content-Type", "application/json")
                                    .POST(
                                            HttpRequest.BodyPublishers.ofString(
                                                    "{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"SelfSubjectReview\"}"))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString())
                    .body();
            return JSON.readTree(body).path("status").path("userInfo");
        }
    }

    static JsonNode claims(String token) throws Exception {
        return JSON.readTree(Base64.getUrlDecoder().decode(token.split("\\.")[1]));
    }

    @Test
    void aNodeBoundTokenCarriesTheStandardClaimsAndProvesTheServiceAccountWithTheNodeInExtra() throws Exception {
        TokenRequest minted = mint("robot", "n1", List.of(), 3600);
        String token = minted.getStatus().getToken();
        String saUid = admin.serviceAccounts()
                .inNamespace("team")
                .withName("robot")
                .get()
                .getMetadata()
                .getUid();
        String nodeUid = admin.nodes().withName("n1").get().getMetadata().getUid();

        JsonNode claims = claims(token);
        assertThat(claims.path("iss").asText()).isEqualTo("https://kubernetes.default.svc.cluster.local");
        assertThat(claims.path("sub").asText()).isEqualTo("system:serviceaccount:team:robot");
        assertThat(claims.path("aud").get(0).asText()).isEqualTo("https://kubernetes.default.svc.cluster.local");
        assertThat(claims.path("exp").asLong() - claims.path("iat").asLong()).isEqualTo(3600);
        assertThat(claims.path("nbf").asLong()).isEqualTo(claims.path("iat").asLong());
        assertThat(claims.path("jti").asText()).isNotEmpty();
        assertThat(claims.path("kubernetes.io").path("namespace").asText()).isEqualTo("team");
        assertThat(claims.path("kubernetes.io")
                        .path("serviceaccount")
                        .path("uid")
                        .asText())
                .isEqualTo(saUid);
        assertThat(claims.path("kubernetes.io").path("node").path("name").asText())
                .isEqualTo("n1");
        assertThat(claims.path("kubernetes.io").path("node").path("uid").asText())
                .isEqualTo(nodeUid);
        assertThat(Instant.parse(minted.getStatus().getExpirationTimestamp()))
                .isCloseTo(
                        Instant.now().plusSeconds(3600),
                        org.assertj.core.api.Assertions.within(5, java.time.temporal.ChronoUnit.SECONDS));

        TokenReview answer = review(token);
        assertThat(answer.getStatus().getAuthenticated()).isTrue();
        assertThat(answer.getStatus().getUser().getUsername()).isEqualTo("system:serviceaccount:team:robot");
        assertThat(answer.getStatus().getUser().getUid()).isEqualTo(saUid);
        assertThat(answer.getStatus().getUser().getGroups())
                .containsExactly("system:serviceaccounts", "system:serviceaccounts:team", "system:authenticated");
        assertThat(answer.getStatus().getUser().getExtra())
                .containsEntry("authentication.kubernetes.io/node-name", List.of("n1"))
                .containsEntry("authentication.kubernetes.io/node-uid", List.of(nodeUid))
                .containsEntry(
                        "authentication.kubernetes.io/credential-id",
                        List.of("JTI=" + claims.path("jti").asText()));
        assertThat(answer.getStatus().getAudiences()).containsExactly("https://kubernetes.default.svc.cluster.local");

        JsonNode me = whoami(token);
        assertThat(me.path("username").asText()).isEqualTo("system:serviceaccount:team:robot");
        assertThat(me.path("extra")
                        .path("authentication.kubernetes.io/node-name")
                        .get(0)
                        .asText())
                .isEqualTo("n1");
    }

    @Test
    void aTokenForAnotherAudienceIsRefusedByTheApiServerAndReviewedOnlyForItsOwn() throws Exception {
        String token = mint("robot", null, List.of("vault"), 3600).getStatus().getToken();
        assertThat(call(token, "/api").statusCode()).isEqualTo(401);

        TokenReview forApi = review(token);
        assertThat(forApi.getStatus().getAuthenticated()).isNotEqualTo(Boolean.TRUE);
        assertThat(forApi.getStatus().getError()).contains("audiences", "invalid");

        TokenReview forVault = review(token, "vault", "other");
        assertThat(forVault.getStatus().getAuthenticated()).isTrue();
        assertThat(forVault.getStatus().getAudiences()).containsExactly("vault");
    }

    @Test
    void theAdministratorsStaticTokenIsValidForTheApiServersAudiencesOnly() {
        String adminToken = Kubeconfig.NAME;
        TokenReview forApi = review(adminToken);
        assertThat(forApi.getStatus().getAuthenticated()).isTrue();
        assertThat(forApi.getStatus().getAudiences()).containsExactlyElementsOf(ServiceAccountTokens.API_AUDIENCES);

        TokenReview forAgents = review(adminToken, "drover.dev/agent");
        assertThat(forAgents.getStatus().getAuthenticated())
                .as("a static token sent to an agent proves nobody there, as on kube-apiserver")
                .isNotEqualTo(Boolean.TRUE);
        assertThat(forAgents.getStatus().getUser().getUsername()).isNull();
        assertThat(forAgents.getStatus().getAudiences()).isNullOrEmpty();

        TokenReview mixed = review(adminToken, "drover.dev/agent", ServiceAccountTokens.API_AUDIENCES.getFirst());
        assertThat(mixed.getStatus().getAudiences()).containsExactly(ServiceAccountTokens.API_AUDIENCES.getFirst());
    }

    @Test
    void forgedTokensAreUnauthorizedWithTheRealStatusBody() throws Exception {
        String token = mint("robot", null, List.of(), 3600).getStatus().getToken();
        assertThat(call(token, "/api").statusCode()).isEqualTo(200);
        String[] parts = token.split("\\.");
        Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();

        JsonNode claims = claims(token);
        ((com.fasterxml.jackson.databind.node.ObjectNode) claims).put("sub", "system:serviceaccount:team:other");
        String otherClaims = b64.encodeToString(JSON.writeValueAsBytes(claims));
        String resigned = parts[0] + "." + otherClaims + "." + parts[2];
        String unsigned =
                b64.encodeToString("{\"alg\":\"none\"}".getBytes(StandardCharsets.UTF_8)) + "." + parts[1] + ".";
        String hmac = b64.encodeToString("{\"alg\":\"HS256\"}".getBytes(StandardCharsets.UTF_8)) + "." + parts[1] + "."
                + parts[2];
        for (String forged :
                List.of(resigned, unsigned, hmac, "a.b.c", "x".repeat(100_000), parts[0] + "." + parts[1])) {
            HttpResponse<String> answer = call(forged, "/api");
            assertThat(answer.statusCode())
                    .as(forged.substring(0, Math.min(40, forged.length())))
                    .isEqualTo(401);
            JsonNode status = JSON.readTree(answer.body());
            assertThat(status.path("reason").asText()).isEqualTo("Unauthorized");
            assertThat(status.path("message").asText()).isEqualTo("Unauthorized");
            assertThat(review(forged).getStatus().getAuthenticated()).isNotEqualTo(Boolean.TRUE);
        }
    }

    @Test
    void aTokenDiesWithItsServiceAccountAndWithItsNodeEvenWhenTheyAreRecreatedUnderTheSameName() throws Exception {
        admin.serviceAccounts()
                .inNamespace("team")
                .resource(new ServiceAccountBuilder()
                        .withNewMetadata()
                        .withName("short-lived")
                        .endMetadata()
                        .build())
                .create();
        String bySa = mint("short-lived", null, List.of(), 3600).getStatus().getToken();
        String byNode = mint("robot", "n2", List.of(), 3600).getStatus().getToken();
        assertThat(call(bySa, "/api").statusCode()).isEqualTo(200);
        assertThat(call(byNode, "/api").statusCode()).isEqualTo(200);

        admin.serviceAccounts().inNamespace("team").withName("short-lived").delete();
        assertThat(call(bySa, "/api").statusCode()).isEqualTo(401);
        admin.serviceAccounts()
                .inNamespace("team")
                .resource(new ServiceAccountBuilder()
                        .withNewMetadata()
                        .withName("short-lived")
                        .endMetadata()
                        .build())
                .create();
        assertThat(call(bySa, "/api").statusCode())
                .as("a new account of the same name")
                .isEqualTo(401);
        assertThat(review(bySa).getStatus().getError()).contains("has been deleted or recreated");

        var node = admin.nodes().withName("n2").get();
        admin.nodes().withName("n2").delete();
        node.getMetadata().setUid(null);
        node.getMetadata().setResourceVersion(null);
        admin.nodes().resource(node).create();
        assertThat(call(byNode, "/api").statusCode())
                .as("the node was recreated")
                .isEqualTo(401);
    }

    @Test
    void theTokenRequestRefusesWhatTheRealOneRefuses() {
        assertThatThrownBy(() -> mint("robot", null, List.of(), 599))
                .isInstanceOf(KubernetesClientException.class)
                .hasMessageContaining(
                        "TokenRequest.authentication.k8s.io \"\" is invalid: spec.expirationSeconds: Invalid value:"
                                + " 599: may not specify a duration less than 10 minutes");
        assertThatThrownBy(() -> mint("nobody", null, List.of(), 3600))
                .isInstanceOf(KubernetesClientException.class)
                .hasMessageContaining("serviceaccounts \"nobody\" not found");
        assertThatThrownBy(() -> mint("robot", "no-such-node", List.of(), 3600))
                .isInstanceOf(KubernetesClientException.class)
                .hasMessageContaining("nodes \"no-such-node\" not found");
        assertThatThrownBy(() -> admin.serviceAccounts()
                        .inNamespace("team")
                        .withName("robot")
                        .tokenRequest(new TokenRequestBuilder()
                                .withNewSpec()
                                .withNewBoundObjectRef()
                                .withApiVersion("apps/v1")
                                .withKind("Deployment")
                                .withName("web")
                                .endBoundObjectRef()
                                .endSpec()
                                .build()))
                .isInstanceOf(KubernetesClientException.class)
                .hasMessageContaining("cannot bind token to object of type apps/v1, Kind=Deployment");
        long longest = mint("robot", null, List.of(), 1L << 31).getSpec().getExpirationSeconds();
        assertThat(longest).isEqualTo(Duration.ofHours(48).toSeconds());
    }

    @Test
    void expiredTokensAndTokensNotYetValidAreRefusedWithTheRealLeeway() throws Exception {
        Instant[] now = {Instant.parse("2026-01-01T00:00:00Z")};
        Clock clock = new Clock() {
            @Override
            public ZoneOffset getZone() {
                return ZoneOffset.UTC;
            }

            @Override
            public Clock withZone(java.time.ZoneId zone) {
                return this;
            }

            @Override
            public Instant instant() {
                return now[0];
            }
        };
        ServiceAccountTokens tokens = new ServiceAccountTokens(clock);
        List<String> api = ServiceAccountTokens.API_AUDIENCES;
        String token = tokens.issue(
                "team", new ServiceAccountTokens.Ref("robot", "u1"), api, now[0].plusSeconds(600), null, null, null);
        assertThat(tokens.verify(token, api).path("sub").asText()).isEqualTo("system:serviceaccount:team:robot");
        now[0] = now[0].plusSeconds(600 + 59);
        assertThat(tokens.verify(token, api)).as("within the minute of leeway").isNotNull();
        now[0] = now[0].plusSeconds(2);
        assertThatThrownBy(() -> tokens.verify(token, api)).hasMessageContaining("expired");
        now[0] = Instant.parse("2025-12-31T23:58:00Z");
        assertThatThrownBy(() -> tokens.verify(token, api)).hasMessageContaining("not valid yet");
        assertThatThrownBy(() -> new ServiceAccountTokens(clock).verify(token, api))
                .as("another server's key")
                .hasMessageContaining("unexpected signing algorithm or key");
    }

    @Test
    void aTokenWhoseSignatureCheckedIsCheckedAgainInEveryOtherWayEachTime() throws Exception {
        ServiceAccountTokens tokens = new ServiceAccountTokens(Clock.systemUTC());
        List<String> api = ServiceAccountTokens.API_AUDIENCES;
        ServiceAccountTokens.Ref robot = new ServiceAccountTokens.Ref("robot", "u1");
        String token = tokens.issue("team", robot, api, Instant.now().plusSeconds(600), null, null, null);

        tokens.verify(token, api).put("sub", "system:serviceaccount:kube-system:admin");
        assertThat(tokens.verify(token, api).path("sub").asText())
                .as("what one caller did to its claims")
                .isEqualTo("system:serviceaccount:team:robot");
        assertThatThrownBy(() -> tokens.verify(token, List.of("https://vault.example")))
                .hasMessageContaining("is invalid for the target audiences");

        String[] parts = token.split("\\.");
        Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
        String claims = new String(Base64.getUrlDecoder().decode(parts[1]), StandardCharsets.UTF_8);
        String forged = parts[0] + "."
                + b64.encodeToString(claims.replace("team:robot", "team:admin").getBytes(StandardCharsets.UTF_8))
                + "." + parts[2];
        assertThatThrownBy(() -> tokens.verify(forged, api))
                .as("the checked token's signature on other claims")
                .hasMessageContaining("invalid signature");

        for (int i = 0; i <= ServiceAccountTokens.SIGNED_KEPT; i++) {
            String other = tokens.issue(
                    "team",
                    new ServiceAccountTokens.Ref("robot-" + i, "u" + i),
                    api,
                    Instant.now().plusSeconds(600),
                    null,
                    null,
                    null);
            assertThat(tokens.verify(other, api).path("sub").asText()).endsWith(":robot-" + i);
            assertThat(tokens.signedKept()).isBetween(1, ServiceAccountTokens.SIGNED_KEPT);
        }
        assertThat(tokens.verify(token, api).path("sub").asText())
                .as("after more tokens than are kept")
                .isEqualTo("system:serviceaccount:team:robot");
    }
}
