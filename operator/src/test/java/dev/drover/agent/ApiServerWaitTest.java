package dev.drover.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.common.Backoff;
import dev.drover.testing.LiveThreads;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.net.ConnectException;
import java.net.ServerSocket;
import java.net.http.HttpConnectTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The agent waiting for an API server that is not there yet: one line per try, and it starts once it answers. */
class ApiServerWaitTest {

    static final String ALLOCATIONS = "/apis/drover.dev/v1alpha1/allocations?limit=1";

    final BlockingQueue<String> warnings = new LinkedBlockingQueue<>();
    final List<String> infos = new ArrayList<>();

    ApiServerWait waitFor(ApiServerWait.Probe probe, Backoff backoff) {
        return new ApiServerWait(probe, backoff, () -> 1.0, warnings::add, infos::add);
    }

    /** A probe that answers as {@code answers} says, in turn, then 200. */
    static ApiServerWait.Probe scripted(List<CompletableFuture<ApiServerWait.Answer>> answers) {
        AtomicInteger next = new AtomicInteger();
        return new ApiServerWait.Probe() {
            @Override
            public String server() {
                return "https://10.0.0.1:6443";
            }

            @Override
            public CompletableFuture<ApiServerWait.Answer> ask() {
                int i = next.getAndIncrement();
                return i < answers.size()
                        ? answers.get(i)
                        : CompletableFuture.completedFuture(new ApiServerWait.Answer(200, ""));
            }
        };
    }

    static CompletableFuture<ApiServerWait.Answer> refused() {
        return CompletableFuture.failedFuture(
                new KubernetesClientException("An error has occurred.", new ConnectException()));
    }

    static CompletableFuture<ApiServerWait.Answer> answer(int code, String message) {
        return CompletableFuture.completedFuture(new ApiServerWait.Answer(code, message));
    }

    @Test
    void eachFailedTrySaysWhyInOneLineAndTheAgentStartsOnceTheApiServerAnswers() throws Exception {
        ApiServerWait wait = waitFor(
                scripted(List.of(
                        refused(),
                        answer(401, "Unauthorized"),
                        answer(403, "allocations.drover.dev is forbidden: User \"system:node:a\" cannot list"))),
                Backoff.from(Duration.ofMillis(20), Duration.ofMillis(50)));

        assertThat(wait.await(new CompletableFuture<>())).isTrue();

        assertThat(warnings)
                .containsExactly(
                        "drover: cannot reach the Kubernetes API server at https://10.0.0.1:6443 (connection refused);"
                                + " retrying in 20ms",
                        "drover: the Kubernetes API server at https://10.0.0.1:6443 does not accept the agent's"
                                + " credentials (401 Unauthorized: Unauthorized): check the token or client"
                                + " certificate its kubeconfig names; retrying in 40ms",
                        "drover: the Kubernetes API server at https://10.0.0.1:6443 does not let the agent list"
                                + " Allocations (403 Forbidden: allocations.drover.dev is forbidden: User"
                                + " \"system:node:a\" cannot list): check the agent's ClusterRole and its binding;"
                                + " retrying in 50ms");
        assertThat(infos)
                .containsExactly("drover: reached the Kubernetes API server at https://10.0.0.1:6443 after 4 tries");
    }

    @Test
    void theFirstAnswerStartsTheAgentWithoutAWord() throws Exception {
        ApiServerWait wait = waitFor(scripted(List.of()), Backoff.from(Duration.ofSeconds(1), Duration.ofSeconds(2)));

        assertThat(wait.await(new CompletableFuture<>())).isTrue();
        assertThat(warnings).isEmpty();
        assertThat(infos).isEmpty();
    }

    @Test
    void pausesAreJitteredBetweenHalfAndAllOfTheBackOff() throws Exception {
        ApiServerWait wait = new ApiServerWait(
                scripted(List.of(refused(), refused())),
                Backoff.from(Duration.ofMillis(40), Duration.ofSeconds(1)),
                () -> 0.0,
                warnings::add,
                infos::add);

        assertThat(wait.await(new CompletableFuture<>())).isTrue();
        assertThat(warnings)
                .extracting(w -> w.substring(w.lastIndexOf(' ') + 1))
                .containsExactly("20ms", "40ms");
    }

    @Test
    void aStopDuringThePauseEndsTheWaitAtOnce() throws Exception {
        ApiServerWait wait = waitFor(
                scripted(List.of(refused(), refused())), Backoff.from(Duration.ofHours(1), Duration.ofHours(2)));
        CompletableFuture<Void> stopped = new CompletableFuture<>();
        try (ExecutorService pool = Executors.newSingleThreadExecutor()) {
            Future<Boolean> waiting = pool.submit(() -> wait.await(stopped));
            assertThat(warnings.poll(10, TimeUnit.SECONDS)).endsWith("retrying in 1h");

            stopped.complete(null);

            assertThat(waiting.get(5, TimeUnit.SECONDS))
                    .as("stopped, not started")
                    .isFalse();
        }
    }

    @Test
    void aStopWhileATryHangsCancelsIt() throws Exception {
        CompletableFuture<ApiServerWait.Answer> hanging = new CompletableFuture<>();
        CountDownLatch asked = new CountDownLatch(1);
        ApiServerWait.Probe probe = new ApiServerWait.Probe() {
            @Override
            public String server() {
                return "https://10.0.0.1:6443";
            }

            @Override
            public CompletableFuture<ApiServerWait.Answer> ask() {
                asked.countDown();
                return hanging;
            }
        };
        ApiServerWait wait = waitFor(probe, Backoff.from(Duration.ofSeconds(1), Duration.ofSeconds(2)));
        CompletableFuture<Void> stopped = new CompletableFuture<>();
        try (ExecutorService pool = Executors.newSingleThreadExecutor()) {
            Future<Boolean> waiting = pool.submit(() -> wait.await(stopped));
            assertThat(asked.await(10, TimeUnit.SECONDS)).isTrue();

            stopped.complete(null);

            assertThat(waiting.get(5, TimeUnit.SECONDS)).isFalse();
            assertThat(hanging).isCancelled();
        }
    }

    @Test
    void aTryThatNeverAnswersIsGivenUpAndTriedAgain() throws Exception {
        CompletableFuture<ApiServerWait.Answer> hanging = new CompletableFuture<>();
        ApiServerWait wait = new ApiServerWait(
                scripted(List.of(hanging)),
                Backoff.from(Duration.ofMillis(10), Duration.ofMillis(20)),
                () -> 1.0,
                warnings::add,
                infos::add,
                Duration.ofMillis(100));

        assertThat(wait.await(new CompletableFuture<>())).isTrue();
        assertThat(warnings)
                .containsExactly("drover: cannot reach the Kubernetes API server at https://10.0.0.1:6443 (no answer"
                        + " within 100ms); retrying in 10ms");
        assertThat(hanging).isCancelled();
    }

    @Test
    void aFailedTryNamesItsCause() {
        assertThat(ApiServerWait.unreachable(new KubernetesClientException("x", new ConnectException())))
                .isEqualTo("connection refused");
        assertThat(ApiServerWait.unreachable(new HttpConnectTimeoutException("HTTP connect timed out")))
                .isEqualTo("connection timed out after 5s");
        assertThat(ApiServerWait.unreachable(new IllegalStateException("odd\nthing")))
                .isEqualTo("IllegalStateException: odd thing");
    }

    /** The real probe: a closed port first, then an API server there that refuses once and then answers. */
    @Test
    void theRealProbeWaitsForAnApiServerThatComesUp() throws Exception {
        int port;
        try (ServerSocket reserved = new ServerSocket(0)) {
            port = reserved.getLocalPort();
        }
        Set<Long> before = LiveThreads.ids(LiveThreads.now());
        Config config = new ConfigBuilder()
                .withMasterUrl("http://127.0.0.1:" + port)
                .withOauthToken("t")
                .build();
        KubernetesMockServer server = new KubernetesMockServer(false);
        try (ApiServerProbe probe = new ApiServerProbe(config, "node-a", false);
                ExecutorService pool = Executors.newSingleThreadExecutor()) {
            ApiServerWait wait = waitFor(probe, Backoff.from(Duration.ofMillis(100), Duration.ofMillis(200)));
            Future<Boolean> waiting = pool.submit(() -> wait.await(new CompletableFuture<>()));

            String first = warnings.poll(20, TimeUnit.SECONDS);
            assertThat(first)
                    .as("said at the first try, not after the client's own retries")
                    .startsWith("drover: cannot reach the Kubernetes API server at http://127.0.0.1:" + port)
                    .endsWith("(connection refused); retrying in 100ms");

            server.expect()
                    .get()
                    .withPath(ALLOCATIONS)
                    .andReturn(
                            403,
                            new StatusBuilder()
                                    .withCode(403)
                                    .withMessage("allocations.drover.dev is forbidden")
                                    .build())
                    .once();
            server.expect()
                    .get()
                    .withPath(ALLOCATIONS)
                    .andReturn(200, "{\"kind\":\"AllocationList\",\"items\":[]}")
                    .always();
            server.start(port);

            assertThat(waiting.get(20, TimeUnit.SECONDS)).isTrue();
            assertThat(warnings)
                    .as("after the refusals, the 403 it answered once")
                    .last()
                    .asString()
                    .contains("(403 Forbidden: allocations.drover.dev is forbidden)");
            assertThat(infos).singleElement().asString().startsWith("drover: reached the Kubernetes API server");
        } finally {
            server.shutdown();
        }
        assertThat(LiveThreads.startedSince(
                        before,
                        t -> t.name().matches("-?\\d+-pool-.*")
                                || t.name().contains("MockWebServer")
                                || t.name().contains("vert.x")
                                || t.name().startsWith("vertx") // the mock server's
                                || t.name().startsWith("globalEventExecutor") // its Netty's, ends once idle
                                // shared by the whole JVM, fabric8's timer ends itself once idle
                                || t.name().startsWith("ForkJoinPool.commonPool")
                                || t.name().startsWith("CachedSingleThreadScheduler")))
                .as("the probe's client and the wait leave no thread")
                .isEmpty();
    }
}
