package dev.drover.httpapi;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.net.InetAddress;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Against an API server that knows one token, {@code alice-token} for user alice, and lets alice read logs in
 * namespace {@code team-a} only.
 */
class KubernetesAuthTest {

    KubernetesMockServer server;
    KubernetesClient client;
    final AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2026-11-22T12:00:00Z"));
    final List<SubjectAccessReview> asked = new CopyOnWriteArrayList<>();
    KubernetesAuth auth;

    @BeforeEach
    void start() {
        server = new KubernetesMockServer(false);
        server.init(InetAddress.getLoopbackAddress(), 0);
        server.expect().post().withPath("/apis/authentication.k8s.io/v1/tokenreviews").andReply(200, request -> {
            TokenReview review = Serialization.unmarshal(request.getBody().readUtf8(), TokenReview.class);
            boolean known = "alice-token".equals(review.getSpec().getToken());
            return new TokenReviewBuilder(review).withNewStatus().withAuthenticated(known)
                    .withError(known ? null : "invalid bearer token")
                    .withNewUser().withUsername(known ? "alice" : null).withGroups(known ? List.of("devs") : null)
                    .endUser().endStatus().build();
        }).always();
        server.expect().post().withPath("/apis/authorization.k8s.io/v1/subjectaccessreviews").andReply(200, request -> {
            SubjectAccessReview review = Serialization.unmarshal(request.getBody().readUtf8(), SubjectAccessReview.class);
            asked.add(review);
            boolean allowed = review.getSpec().getUser().equals("alice")
                    && review.getSpec().getResourceAttributes().getNamespace().equals("team-a");
            return new SubjectAccessReviewBuilder(review).withNewStatus().withAllowed(allowed)
                    .withReason(allowed ? "RBAC: allowed by RoleBinding readers" : "").endStatus().build();
        }).always();
        client = server.createClient(new JdkHttpClientFactory());
        auth = new KubernetesAuth(client, now::get);
    }

    @AfterEach
    void stop() {
        client.close();
        server.destroy();
    }

    @Test
    void noTokenIsRefusedWithoutAskingTheApiServer() {
        int before = server.getRequestCount();
        for (String header : new String[] {null, "", "Basic YWxpY2U6cHc=", "Bearer ", "Bearer    "}) {
            assertThat(auth.check(header, "team-a", "web", "log"))
                    .isEqualTo(new KubernetesAuth.Decision.Refused(401, "no bearer token: send your Kubernetes token as"
                            + " \"Authorization: Bearer TOKEN\" (kubectl drover sends your kubeconfig's)"));
        }
        assertThat(server.getRequestCount()).isEqualTo(before);
    }

    @Test
    void aTokenTheApiServerDoesNotAcceptIsRefused() {
        assertThat(auth.check("Bearer forged", "team-a", "web", "log"))
                .isEqualTo(new KubernetesAuth.Decision.Refused(401,
                        "the API server does not accept this token: invalid bearer token"));
    }

    @Test
    void accessIsWhatRbacSaysForTheVirtualSubresource() {
        assertThat(auth.check("Bearer alice-token", "team-a", "web", "log"))
                .isEqualTo(new KubernetesAuth.Decision.Allowed(new KubernetesAuth.Caller("alice", List.of("devs"))));
        var review = asked.getFirst().getSpec();
        assertThat(review.getGroups()).containsExactly("devs");
        assertThat(review.getResourceAttributes().getGroup()).isEqualTo("drover.dev");
        assertThat(review.getResourceAttributes().getResource()).isEqualTo("allocations");
        assertThat(review.getResourceAttributes().getSubresource()).isEqualTo("log");
        assertThat(review.getResourceAttributes().getVerb()).isEqualTo("get");
        assertThat(review.getResourceAttributes().getName()).isEqualTo("web");

        assertThat(auth.check("Bearer alice-token", "team-b", "web", "snapshot"))
                .isEqualTo(new KubernetesAuth.Decision.Refused(403, "user \"alice\" cannot get allocations/snapshot in"
                        + " namespace \"team-b\"; an RBAC rule on resource \"allocations/snapshot\" of group drover.dev"
                        + " grants it"));
    }

    @Test
    void answersAreKeptForAMinute() {
        auth.check("Bearer alice-token", "team-a", "web", "log");
        int after = server.getRequestCount();
        auth.check("Bearer alice-token", "team-a", "web", "log");
        assertThat(server.getRequestCount()).as("answered from the cache").isEqualTo(after);
        now.set(now.get().plus(KubernetesAuth.CACHE_FOR).plus(Duration.ofSeconds(1)));
        auth.check("Bearer alice-token", "team-a", "web", "log");
        assertThat(server.getRequestCount()).as("asked again after a minute").isEqualTo(after + 2);
    }

    @Test
    void anApiServerThatCannotBeReachedIsA503() throws Exception {
        int port;
        try (var s = new java.net.ServerSocket(0)) {
            port = s.getLocalPort(); // closed again: nothing listens there
        }
        try (KubernetesClient nowhere = new io.fabric8.kubernetes.client.KubernetesClientBuilder()
                .withHttpClientFactory(new JdkHttpClientFactory())
                .withConfig(new io.fabric8.kubernetes.client.ConfigBuilder().withMasterUrl("http://127.0.0.1:" + port)
                        .withRequestRetryBackoffLimit(0).build()).build()) {
            KubernetesAuth.Decision d = new KubernetesAuth(nowhere, now::get).check("Bearer alice-token", "team-a",
                    "web", "log");
            assertThat(d).isInstanceOfSatisfying(KubernetesAuth.Decision.Refused.class, r -> {
                assertThat(r.status()).isEqualTo(503);
                assertThat(r.message()).startsWith("the agent could not check the token with the API server");
            });
        }
    }
}
