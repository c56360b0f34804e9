package dev.drover.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.testing.LiveThreads;
import io.prometheus.client.Summary;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class MetricsServerTest {

    static DroverMetrics metrics() {
        return new DroverMetrics(
                new DroverMetrics.Sources(Map::of, () -> 0, () -> new long[3], () -> new long[5], () -> new long[3]));
    }

    static String scrape(DroverMetrics metrics, String accept) throws Exception {
        try (MetricsServer server = new MetricsServer(
                        new InetSocketAddress(0), metrics.registry(), Optional::empty, Optional::empty);
                HttpClient http = HttpClient.newHttpClient()) {
            HttpRequest.Builder get =
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/metrics"));
            if (accept != null) {
                get.header("Accept", accept);
            }
            HttpResponse<String> res = http.send(get.build(), HttpResponse.BodyHandlers.ofString());
            assertThat(res.statusCode()).isEqualTo(200);
            return res.body();
        }
    }

    @Test
    void readinessIsASeriesThatFollowsReadyz() throws Exception {
        DroverMetrics metrics = metrics();
        AtomicReference<Optional<String>> ready = new AtomicReference<>(Optional.of("starting"));
        new ReadyMetric(ready::get).register(metrics.registry());
        assertThat(scrape(metrics, null)).contains("\ndrover_agent_ready 0.0\n");
        ready.set(Optional.empty());
        assertThat(scrape(metrics, null)).contains("\ndrover_agent_ready 1.0\n");
    }

    @Test
    void aScrapeHasNoCreatedSeriesInEitherFormat() throws Exception {
        DroverMetrics metrics = metrics();
        metrics.taskEvent(TaskEventType.Restarting);
        metrics.seenToRunning(0.3);
        Summary.build("test_latency_seconds", "a summary")
                .register(metrics.registry())
                .observe(1);

        for (String accept : new String[] {null, "application/openmetrics-text; version=1.0.0"}) {
            String body = scrape(metrics, accept);
            // the counters, histograms and summaries are there, with their values...
            assertThat(body).contains("drover_task_restarts_total 1.0");
            assertThat(body).contains("drover_alloc_seen_to_running_seconds_count 1.0");
            assertThat(body).contains("test_latency_seconds_count 1.0");
            assertThat(body).contains("jvm_gc_collection_seconds_count");
            // ...but none of simpleclient's start-time series, whatever PROMETHEUS_DISABLE_CREATED_SERIES says
            assertThat(body.lines().filter(l -> l.contains("_created")).toList())
                    .as("accept %s", accept)
                    .isEmpty();
        }
    }

    @Test
    void theChecksAnswerWithTheirReasonAHeadHasNoBodyAndClosingLeavesNoThread() throws Exception {
        Set<Long> before = LiveThreads.ids(LiveThreads.now());
        try (MetricsServer server = new MetricsServer(
                        new InetSocketAddress(0),
                        metrics().registry(),
                        Optional::empty,
                        () -> Optional.of("not watching the API server yet"));
                HttpClient http = HttpClient.newHttpClient()) {
            String base = "http://127.0.0.1:" + server.port();
            HttpResponse<String> healthz = http.send(
                    HttpRequest.newBuilder(URI.create(base + "/healthz")).build(), BodyHandlers.ofString());
            assertThat(healthz.statusCode()).isEqualTo(200);
            assertThat(healthz.body()).isEqualTo("ok\n");
            HttpResponse<String> readyz = http.send(
                    HttpRequest.newBuilder(URI.create(base + "/readyz")).build(), BodyHandlers.ofString());
            assertThat(readyz.statusCode()).isEqualTo(503);
            assertThat(readyz.body()).isEqualTo("not watching the API server yet\n");
            HttpResponse<String> head = http.send(
                    HttpRequest.newBuilder(URI.create(base + "/healthz"))
                            .method("HEAD", HttpRequest.BodyPublishers.noBody())
                            .build(),
                    BodyHandlers.ofString());
            assertThat(head.statusCode()).isEqualTo(200);
            assertThat(head.body()).isEmpty();
            assertThat(http.send(HttpRequest.newBuilder(URI.create(base + "/")).build(), BodyHandlers.ofString())
                            .statusCode())
                    .isEqualTo(404);
        }
        // the test's HTTP client and the pools it used are its own; the JDK starts its unblocker with the first
        // virtual thread, for good
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(LiveThreads.startedSince(
                                before,
                                t -> t.name().startsWith("HttpClient")
                                        || t.name().startsWith("ForkJoinPool")
                                        || t.name().startsWith("awaitility")
                                        || t.name().equals("VirtualThread-unblocker")))
                        .isEmpty());
    }
}
