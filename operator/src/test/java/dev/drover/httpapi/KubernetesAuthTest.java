package dev.drover.httpapi;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Against an API server that knows one token, {@code alice-token} for user alice, and lets alice read logs in
 * namespace {@code team-a} only.
 */
class KubernetesAuthTest {

    ReviewingApiServer api;
    final AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2026-11-22T12:00:00Z"));
    KubernetesAuth auth;

    @BeforeEach
    void start() {
        api = new ReviewingApiServer();
        auth = new KubernetesAuth(api.client, now::get);
    }

    @AfterEach
    void stop() {
        api.close();
    }

    @Test
    void noTokenIsRefusedWithoutAskingTheApiServer() {
        int before = api.requestCount();
        for (String header : new String[] {null, "", "Basic YWxpY2U6cHc=", "Bearer ", "Bearer    "}) {
            assertThat(auth.check(header, "team-a", "web", "log"))
                    .isEqualTo(new KubernetesAuth.Decision.Refused(401, "no bearer token: send your Kubernetes token as"
                            + " \"Authorization: Bearer TOKEN\" (kubectl drover sends your kubeconfig's)"));
        }
        assertThat(api.requestCount()).isEqualTo(before);
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
        var review = api.asked.getFirst().getSpec();
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
        int after = api.requestCount();
        auth.check("Bearer alice-token", "team-a", "web", "log");
        assertThat(api.requestCount()).as("answered from the cache").isEqualTo(after);
        now.set(now.get().plus(KubernetesAuth.CACHE_FOR).plus(Duration.ofSeconds(1)));
        auth.check("Bearer alice-token", "team-a", "web", "log");
        assertThat(api.requestCount()).as("asked again after a minute").isEqualTo(after + 2);
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
