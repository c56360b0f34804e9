package dev.drover.httpapi;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.authentication.UserInfo;
import io.fabric8.kubernetes.api.model.authentication.UserInfoBuilder;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
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

    static final InetAddress HERE = InetAddress.getLoopbackAddress();
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
            assertThat(auth.check(header, HERE, "team-a", "web", "log"))
                    .isEqualTo(new KubernetesAuth.Decision.Refused(
                            401,
                            "no bearer token: send your Kubernetes token as"
                                    + " \"Authorization: Bearer TOKEN\" (kubectl drover sends your kubeconfig's)"));
        }
        assertThat(api.requestCount()).isEqualTo(before);
    }

    @Test
    void aTokenTheApiServerDoesNotAcceptIsRefused() {
        assertThat(auth.check("Bearer forged", HERE, "team-a", "web", "log"))
                .isEqualTo(new KubernetesAuth.Decision.Refused(
                        401,
                        "the API server does not accept this token for audience drover.dev/agent: invalid bearer token"
                                + " (a token made for the API server, such as a kubeconfig's, is not taken here: use"
                                + " kubectl drover, which goes through the aggregated API agent.drover.dev)"));
    }

    @Test
    void accessIsWhatRbacSaysForTheVirtualSubresource() {
        assertThat(auth.check("Bearer alice-token", HERE, "team-a", "web", "log"))
                .isEqualTo(
                        new KubernetesAuth.Decision.Allowed(new KubernetesAuth.Caller("alice", List.of("devs"), null)));
        var review = api.asked.getFirst().getSpec();
        assertThat(review.getGroups()).containsExactly("devs");
        assertThat(review.getResourceAttributes().getGroup()).isEqualTo("agent.drover.dev");
        assertThat(review.getResourceAttributes().getResource()).isEqualTo("allocations");
        assertThat(review.getResourceAttributes().getSubresource()).isEqualTo("log");
        assertThat(review.getResourceAttributes().getVerb()).isEqualTo("get");
        assertThat(review.getResourceAttributes().getName()).isEqualTo("web");

        assertThat(auth.check("Bearer alice-token", HERE, "team-b", "web", "snapshot"))
                .isEqualTo(new KubernetesAuth.Decision.Refused(
                        403,
                        "user \"alice\" cannot get allocations/snapshot in"
                                + " namespace \"team-b\"; an RBAC rule with verb get on resource \"allocations/snapshot\" of group agent.drover.dev"
                                + " grants it"));
    }

    @Test
    void theTokenIsReviewedForTheAgentsAudienceOnly() {
        auth.check("Bearer alice-token", HERE, "team-a", "web", "log");
        assertThat(api.reviewed.getFirst().getSpec().getAudiences()).containsExactly("drover.dev/agent");
    }

    @Test
    void aTokenForTheApiServerIsRefusedSoNoTokenSentHereCanBeReplayedThere() {
        assertThat(auth.check("Bearer alice-api-token", HERE, "team-a", "web", "log"))
                .isInstanceOfSatisfying(KubernetesAuth.Decision.Refused.class, r -> {
                    assertThat(r.status()).isEqualTo(401);
                    assertThat(r.message())
                            .startsWith(
                                    "the API server does not accept this token for audience drover.dev/agent: token audiences"
                                            + " [https://kubernetes.default.svc] is invalid");
                });
        assertThat(api.asked).as("no right is checked for a refused token").isEmpty();
    }

    @Test
    void anAnswerThatDoesNotNameTheAudienceIsRefused() {
        assertThat(auth.check("Bearer sloppy-token", HERE, "team-a", "web", "log"))
                .isEqualTo(new KubernetesAuth.Decision.Refused(
                        401,
                        "this API takes only tokens with audience drover.dev/agent (the API server reported none):"
                                + " use kubectl drover, which goes through the aggregated API agent.drover.dev, or a"
                                + " token made with kubectl create token --audience drover.dev/agent"));
        assertThat(api.asked).isEmpty();
    }

    @Test
    void aNodeBoundTokenNamesItsNode() {
        assertThat(auth.check("Bearer node-b-token", HERE, "team-a", "web", "snapshot"))
                .isEqualTo(new KubernetesAuth.Decision.Allowed(
                        new KubernetesAuth.Caller(ReviewingApiServer.NODE_B_ACCOUNT, List.of("devs"), "node-b")));
        assertThat(api.asked.getFirst().getSpec().getExtra())
                .as("the review asks with the token's extra")
                .containsEntry("authentication.kubernetes.io/node-name", List.of("node-b"));
    }

    @Test
    void anIdentityFromAFrontProxyIsCheckedWithItsUidGroupsAndExtraAndKept() {
        UserInfo alice = new UserInfoBuilder()
                .withUsername("alice")
                .withUid("u-1")
                .withGroups("devs")
                .withExtra(Map.of("scopes", List.of("x")))
                .build();
        assertThat(auth.authorize(alice, "team-a", "web", "stats"))
                .isEqualTo(
                        new KubernetesAuth.Decision.Allowed(new KubernetesAuth.Caller("alice", List.of("devs"), null)));
        var spec = api.asked.getFirst().getSpec();
        assertThat(spec.getUid()).isEqualTo("u-1");
        assertThat(spec.getExtra()).containsEntry("scopes", List.of("x"));
        auth.authorize(alice, "team-a", "web", "stats");
        assertThat(api.asked).as("kept").hasSize(1);
        UserInfo aliceInAnotherGroup =
                new UserInfoBuilder(alice).withGroups("admins").build();
        auth.authorize(aliceInAnotherGroup, "team-a", "web", "stats");
        assertThat(api.asked)
                .as("another identity is asked for, not taken from alice's answer")
                .hasSize(2);
        assertThat(auth.authorize(alice, "team-b", "web", "stats"))
                .extracting(d -> ((KubernetesAuth.Decision.Refused) d).status())
                .isEqualTo(403);
        assertThat(auth.authorize(new UserInfo(), "team-a", "web", "stats"))
                .extracting(d -> ((KubernetesAuth.Decision.Refused) d).status())
                .isEqualTo(401);
    }

    @Test
    void answersAreKeptForAMinute() {
        auth.check("Bearer alice-token", HERE, "team-a", "web", "log");
        int after = api.requestCount();
        auth.check("Bearer alice-token", HERE, "team-a", "web", "log");
        assertThat(api.requestCount()).as("answered from the cache").isEqualTo(after);
        now.set(now.get().plus(KubernetesAuth.CACHE_FOR).plus(Duration.ofSeconds(1)));
        auth.check("Bearer alice-token", HERE, "team-a", "web", "log");
        assertThat(api.requestCount()).as("asked again after a minute").isEqualTo(after + 2);
    }

    @Test
    void aRefusedTokenIsRefusedAgainWithoutAskingForTenSeconds() {
        for (int i = 0; i < 5; i++) {
            assertThat(auth.check("Bearer forged", HERE, "team-a", "web-" + i, "log"))
                    .extracting(d -> ((KubernetesAuth.Decision.Refused) d).status())
                    .isEqualTo(401);
        }
        assertThat(api.tokenReviews).as("asked once, whatever the allocation").hasValue(1);
        now.set(now.get().plus(KubernetesAuth.REFUSED_FOR).plus(Duration.ofSeconds(1)));
        auth.check("Bearer forged", HERE, "team-a", "web", "log");
        assertThat(api.tokenReviews)
                .as("a token may be valid soon after it was not")
                .hasValue(2);
    }

    @Test
    void randomTokensFromOneSourceAreReviewedNoFasterThanItsBudget() throws Exception {
        auth = new KubernetesAuth(api.client, now::get, new ApiLimits(10, 5, 10, 2, 5, Duration.ofSeconds(5)));
        int refusedForRate = 0;
        for (int i = 0; i < 50; i++) {
            KubernetesAuth.Decision d = auth.check("Bearer random-" + i, HERE, "team-a", "web", "log");
            KubernetesAuth.Decision.Refused r = (KubernetesAuth.Decision.Refused) d;
            assertThat(r.status()).isIn(401, 429);
            if (r.status() == 429) {
                refusedForRate++;
                assertThat(r.retryAfter()).isEqualTo(Duration.ofSeconds(1));
                assertThat(r.message()).startsWith("too many requests from 127.0.0.1 need the API server");
            }
        }
        assertThat(api.tokenReviews).as("the burst").hasValue(5);
        assertThat(refusedForRate).isEqualTo(45);
        now.set(now.get().plusSeconds(2));
        for (int i = 50; i < 100; i++) {
            auth.check("Bearer random-" + i, HERE, "team-a", "web", "log");
        }
        assertThat(api.tokenReviews).as("two seconds at two a second").hasValue(9);
        auth.check("Bearer random-x", InetAddress.getByName("10.0.0.7"), "team-a", "web", "log");
        assertThat(api.tokenReviews).as("another source has its own budget").hasValue(10);
        assertThat(auth.check("Bearer alice-token", HERE, "team-a", "web", "log")
                        .getClass())
                .as("a good token from a source over its budget waits its turn too")
                .isEqualTo(KubernetesAuth.Decision.Refused.class);
    }

    @Test
    @SuppressWarnings("try") // the server socket is closed early on purpose, to free the acceptor
    void anApiServerThatNeverAnswersIsA503WithinTheDeadline() throws Exception {
        List<Socket> held = new CopyOnWriteArrayList<>();
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Thread acceptor = Thread.ofVirtual().start(() -> {
                try {
                    while (true) {
                        held.add(silent.accept()); // and never a byte back
                    }
                } catch (IOException closed) {
                    // the test is over
                }
            });
            try (KubernetesClient hanging = new KubernetesClientBuilder()
                    .withHttpClientFactory(new JdkHttpClientFactory())
                    .withConfig(new ConfigBuilder()
                            .withMasterUrl("http://127.0.0.1:" + silent.getLocalPort())
                            .build())
                    .build()) {
                KubernetesAuth patient =
                        new KubernetesAuth(hanging, now::get, new ApiLimits(10, 5, 10, 10, 40, Duration.ofMillis(500)));
                long begin = System.nanoTime();
                KubernetesAuth.Decision d = patient.check("Bearer alice-token", HERE, "team-a", "web", "log");
                Duration took = Duration.ofNanos(System.nanoTime() - begin);
                assertThat(d)
                        .isEqualTo(new KubernetesAuth.Decision.Refused(
                                503,
                                "the agent could not check the token with the API server: no answer within 500 ms"));
                assertThat(took)
                        .as("the review's deadline, not the client's timeouts and retries")
                        .isLessThan(Duration.ofSeconds(3));
            } finally {
                silent.close();
                acceptor.join();
                for (Socket s : held) {
                    s.close();
                }
            }
        }
    }

    @Test
    void anApiServerThatCannotBeReachedIsA503() throws Exception {
        int port;
        try (var s = new java.net.ServerSocket(0)) {
            port = s.getLocalPort(); // closed again: nothing listens there
        }
        try (KubernetesClient nowhere = new io.fabric8.kubernetes.client.KubernetesClientBuilder()
                .withHttpClientFactory(new JdkHttpClientFactory())
                .withConfig(new io.fabric8.kubernetes.client.ConfigBuilder()
                        .withMasterUrl("http://127.0.0.1:" + port)
                        .withRequestRetryBackoffLimit(0)
                        .build())
                .build()) {
            KubernetesAuth.Decision d =
                    new KubernetesAuth(nowhere, now::get).check("Bearer alice-token", HERE, "team-a", "web", "log");
            assertThat(d).isInstanceOfSatisfying(KubernetesAuth.Decision.Refused.class, r -> {
                assertThat(r.status()).isEqualTo(503);
                assertThat(r.message()).startsWith("the agent could not check the token with the API server");
            });
        }
    }
}
