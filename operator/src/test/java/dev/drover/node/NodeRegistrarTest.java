package dev.drover.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.drover.deviceplugin.DevicePlugins;
import dev.drover.devices.DeviceManager;
import dev.drover.devices.HeldByPods;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.dsl.HttpMethod;
import io.fabric8.mockwebserver.http.Buffer;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The agent's fields on its own Node, against fabric8's CRUD mock server standing in for the API server. */
class NodeRegistrarTest {

    static final String CERT = "drover.dev/agent-certificate-sha256";
    static final String PORT = "drover.dev/agent-api-port";
    static final ObjectMapper JSON = new ObjectMapper();
    static final Map<String, String> API = Map.of(PORT, "10346", CERT, "aa".repeat(32));

    /**
     * The CRUD mock, with a patch of {@code nodes/status} applied to labels and annotations too (a real API
     * server's nodes/status does), counting the reads and writes of the Node, and refusing watches while told to.
     */
    static final class NodeApi extends KubernetesCrudDispatcher {
        final AtomicInteger reads = new AtomicInteger();
        final List<JsonNode> patches = new CopyOnWriteArrayList<>();
        final AtomicInteger watchesToRefuse = new AtomicInteger();

        NodeApi() {
            super(new ArrayList<>());
        }

        @Override
        public MockResponse dispatch(RecordedRequest request) {
            String path = request.getPath();
            if (request.getMethod().equals("GET") && path.contains("watch=true") && watchesToRefuse.get() > 0) {
                watchesToRefuse.decrementAndGet();
                return new MockResponse().setResponseCode(403).setBody("""
                        {"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,
                         "message":"nodes is forbidden: User cannot watch resource nodes"}""");
            }
            if (request.getMethod().equals("GET") && path.equals("/api/v1/nodes/node-a")) {
                reads.incrementAndGet();
            }
            if (request.getMethod().equals("PATCH") && path.equals("/api/v1/nodes/node-a/status")) {
                // The mock keeps a key a merge patch sets to null; the API server removes it (RFC 7386), as here.
                try {
                    JsonNode patch = JSON.readTree(request.getBody().readByteArray());
                    patches.add(patch);
                    MockResponse current = super.dispatch(new RecordedRequest(
                            "HTTP/1.1",
                            HttpMethod.GET,
                            path.replace("/status", ""),
                            request.getHeaders(),
                            new Buffer()));
                    ObjectNode node =
                            (ObjectNode) JSON.readTree(current.getBody().readUtf8());
                    merge(node, patch);
                    return super.dispatch(new RecordedRequest(
                            request.getHttpVersion(),
                            HttpMethod.PUT,
                            path.replace("/status", ""),
                            request.getHeaders(),
                            new Buffer(JSON.writeValueAsBytes(node))));
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }
            return super.dispatch(request);
        }

        /** RFC 7386: an object merges key by key, null removes, anything else replaces. */
        static void merge(ObjectNode target, JsonNode patch) {
            patch.properties().forEach(e -> {
                if (e.getValue().isNull()) {
                    target.remove(e.getKey());
                } else if (e.getValue().isObject() && target.get(e.getKey()) instanceof ObjectNode inner) {
                    merge(inner, e.getValue());
                } else {
                    target.set(e.getKey(), e.getValue());
                }
            });
        }
    }

    final NodeApi api = new NodeApi();
    final AtomicLong now = new AtomicLong(1_000_000_000_000L);
    KubernetesMockServer server;
    KubernetesClient client;
    NodeRegistrar registrar;
    DeviceManager devices;

    @TempDir
    Path dir;

    @BeforeEach
    void start() {
        server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), api, false);
        server.init(java.net.InetAddress.getLoopbackAddress(), 0);
        client = server.createClient(new JdkHttpClientFactory());
        client.resource(new NodeBuilder()
                        .withNewMetadata()
                        .withName("node-a")
                        .addToLabels("team", "a")
                        .addToAnnotations("example.com/owner", "ops")
                        .endMetadata()
                        .withNewStatus()
                        .addToCapacity("cpu", new io.fabric8.kubernetes.api.model.Quantity("4"))
                        .endStatus()
                        .build())
                .create();
    }

    @AfterEach
    void stop() {
        if (registrar != null) {
            registrar.close();
        }
        if (devices != null) {
            devices.close();
        }
        client.close();
        server.destroy();
    }

    /** A registrar that checks its devices hourly and reads the Node hourly: only its watch sees a change soon. */
    NodeRegistrar start(DeviceManager devices, Map<String, String> annotations) {
        registrar = new NodeRegistrar(
                client, "node-a", devices, annotations, Duration.ofHours(1), Duration.ofHours(1), now::get);
        await().atMost(Duration.ofSeconds(10)).until(() -> api.patches.size() == 1);
        return registrar;
    }

    Node node() {
        return client.nodes().withName("node-a").get();
    }

    void annotate(String key, String value) {
        client.nodes().withName("node-a").edit(n -> {
            n.getMetadata().getAnnotations().put(key, value);
            return n;
        });
    }

    DeviceManager twoGpus() throws Exception {
        Path plugin = dir.resolve("gpus.yaml");
        Files.writeString(plugin, """
                groups:
                  - vendor: nvidia
                    type: gpu
                    model: Tesla T4
                    instances:
                      - id: GPU-a
                      - id: GPU-b
                """);
        devices = new DeviceManager(
                List.of(DevicePlugins.discover().select("fake:" + plugin)),
                new DeviceManager.Timing(
                        Duration.ofSeconds(5),
                        Duration.ofSeconds(5),
                        Duration.ofSeconds(5),
                        Duration.ofMillis(50),
                        Duration.ofMillis(200)));
        assertThat(devices.awaitFirstFingerprints(Duration.ofSeconds(10))).isTrue();
        return devices;
    }

    @Test
    void aTamperedCertificateAnnotationIsSetBackAndNoOneElsesKeysAreTouched() {
        start(null, API);
        assertThat(node().getMetadata().getAnnotations()).containsEntry(CERT, "aa".repeat(32));
        annotate(CERT, "ee".repeat(32));
        await().atMost(Duration.ofSeconds(5))
                .untilAsserted(
                        () -> assertThat(node().getMetadata().getAnnotations()).containsEntry(CERT, "aa".repeat(32)));
        Node node = node();
        assertThat(node.getMetadata().getAnnotations()).containsEntry("example.com/owner", "ops");
        assertThat(node.getMetadata().getLabels()).containsEntry("team", "a");
        assertThat(node.getStatus().getCapacity()).containsKey("cpu");
        assertThat(api.patches).hasSize(2);
    }

    @Test
    void aRemovedLabelIsPutBack() throws Exception {
        start(twoGpus(), Map.of());
        assertThat(node().getMetadata().getLabels()).containsEntry("drover.dev/gpu.count", "2");
        client.nodes().withName("node-a").edit(n -> {
            n.getMetadata().getLabels().remove("drover.dev/gpu.count");
            return n;
        });
        await().atMost(Duration.ofSeconds(5))
                .untilAsserted(
                        () -> assertThat(node().getMetadata().getLabels()).containsEntry("drover.dev/gpu.count", "2"));
        assertThat(node().getMetadata().getLabels()).containsEntry("team", "a");
    }

    @Test
    void aDroverKeyTheAgentDoesNotSetIsRemovedAndOthersKeysStay() {
        start(null, API);
        client.nodes().withName("node-a").edit(n -> {
            n.getMetadata().getAnnotations().put("drover.dev/agent-api-host", "evil.example.com");
            n.getMetadata().getAnnotations().put("example.com/extra", "kept");
            n.getMetadata().getLabels().put("drover.dev/gpu.count", "8");
            return n;
        });
        await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
            Node node = node();
            assertThat(node.getMetadata().getAnnotations())
                    .doesNotContainKey("drover.dev/agent-api-host")
                    .containsEntry("example.com/extra", "kept")
                    .containsEntry("example.com/owner", "ops");
            assertThat(node.getMetadata().getLabels())
                    .doesNotContainKey("drover.dev/gpu.count")
                    .containsEntry("team", "a");
        });
    }

    @Test
    void restoresAreBoundedToThreeAMinute() {
        start(null, API);
        for (int i = 0; i < NodeRegistrar.RESTORES_PER_MINUTE; i++) {
            annotate(CERT, "0" + i + "0".repeat(62));
            await().atMost(Duration.ofSeconds(5))
                    .until(() -> node().getMetadata().getAnnotations().get(CERT).equals("aa".repeat(32)));
        }
        annotate(CERT, "ff".repeat(32));
        await().during(Duration.ofSeconds(1))
                .atMost(Duration.ofSeconds(3))
                .until(() -> node().getMetadata().getAnnotations().get(CERT).equals("ff".repeat(32)));
        assertThat(api.patches).hasSize(1 + NodeRegistrar.RESTORES_PER_MINUTE);
        int reads = api.reads.get();
        for (int i = 0; i < 5; i++) {
            annotate(CERT, "f" + i + "f".repeat(62)); // a writer fighting: not even a read for each change
        }
        await().during(Duration.ofMillis(500))
                .atMost(Duration.ofSeconds(2))
                .until(() -> api.reads.get() - reads == 5 /* each edit's own read */);

        now.addAndGet(Duration.ofSeconds(60 / NodeRegistrar.RESTORES_PER_MINUTE).toNanos());
        annotate(CERT, "dd".repeat(32));
        await().atMost(Duration.ofSeconds(5))
                .until(() -> node().getMetadata().getAnnotations().get(CERT).equals("aa".repeat(32)));
        assertThat(api.patches).hasSize(2 + NodeRegistrar.RESTORES_PER_MINUTE);
    }

    @Test
    void aStaleEventIsReadAgainAndWritesNothing() {
        start(null, API);
        int reads = api.reads.get();
        Node stale = node();
        stale.getMetadata().getAnnotations().put(CERT, "ee".repeat(32));
        registrar.seen(NodeDriftTest.view(stale));
        assertThat(api.reads.get()).as("the Node is read again").isEqualTo(reads + 2 /* node() and the re-read */);
        assertThat(api.patches).as("the Node as read is as wanted: no write").hasSize(1);
    }

    @Test
    void aRefusedWatchIsOpenedAgainAfterOneSecondThenTwo() {
        api.watchesToRefuse.set(2);
        start(null, API);
        NodeWatch watch = registrar.watch();
        await().atMost(Duration.ofSeconds(5)).until(() -> watch.failures() == 1);
        assertThat(watch.nanosUntilRetry()).isEqualTo(Duration.ofSeconds(1).toNanos());
        now.addAndGet(Duration.ofSeconds(1).toNanos());
        await().atMost(Duration.ofSeconds(5)).until(() -> watch.failures() == 2);
        assertThat(watch.nanosUntilRetry()).isEqualTo(Duration.ofSeconds(2).toNanos());
        now.addAndGet(Duration.ofSeconds(2).toNanos());
        await().atMost(Duration.ofSeconds(5)).until(watch::isOpen);
        annotate(CERT, "ee".repeat(32));
        await().atMost(Duration.ofSeconds(5))
                .until(() -> node().getMetadata().getAnnotations().get(CERT).equals("aa".repeat(32)));
    }

    @Test
    void aRenewedCertificatesFingerprintIsWrittenToTheNodeAtOnce() {
        start(null, API);
        registrar.annotate(Map.of(CERT, "bb".repeat(32)));
        assertThat(api.patches).hasSize(2);
        JsonNode annotations = api.patches.get(1).path("metadata").path("annotations");
        assertThat(annotations.path(CERT).asText()).isEqualTo("bb".repeat(32));
        assertThat(annotations.path(PORT).asText()).isEqualTo("10346");
        assertThat(api.patches.get(1).has("status"))
                .as("an agent without devices writes no capacity")
                .isFalse();
    }

    @Test
    void changingAnnotationsAreWrittenWhenNudgedAndABurstCostsOneWrite() throws Exception {
        start(null, API);
        AtomicLong requested = new AtomicLong();
        registrar.follow(() -> Map.of("drover.dev/requested-memory-mb", Long.toString(requested.get())));
        await().atMost(Duration.ofSeconds(10))
                .until(() -> "0".equals(node().getMetadata().getAnnotations().get("drover.dev/requested-memory-mb")));
        int before = api.patches.size();

        for (int i = 1; i <= 50; i++) { // fifty admissions in a burst
            requested.set(i * 10L);
            registrar.nudge();
        }

        await().atMost(Duration.ofSeconds(10))
                .until(() -> "500".equals(node().getMetadata().getAnnotations().get("drover.dev/requested-memory-mb")));
        assertThat(api.patches.size() - before)
                .as("the burst is written once, %s after the first nudge", NodeRegistrar.NUDGE_GAP)
                .isEqualTo(1);
        assertThat(node().getMetadata().getAnnotations()).containsAllEntriesOf(API);
    }

    /** A view of Pods' devices the test sets. */
    static final class Held implements HeldByPods {
        volatile View view = View.NONE;

        @Override
        public View fresh() {
            return view;
        }

        @Override
        public View last() {
            return view;
        }
    }

    @Test
    void theNodeShowsTheGpusPodsHoldAsNotAllocatableAndNamesThem() throws Exception {
        Held held = new Held();
        held.view = HeldByPods.View.held(Map.of("GPU-a", "ml/trainer-0"));
        start(twoGpus(), Map.of());
        registrar.heldByPods(held);

        await().atMost(Duration.ofSeconds(10))
                .until(() -> node().getMetadata().getAnnotations().containsKey("drover.dev/devices-held-by-pods"));
        Node node = node();
        assertThat(node.getMetadata().getAnnotations())
                .containsEntry("drover.dev/devices-held-by-pods", "nvidia-gpu=GPU-a");
        assertThat(node.getStatus().getCapacity().get("drover.dev/nvidia-gpu").getAmount())
                .isEqualTo("2");
        assertThat(node.getStatus()
                        .getAllocatable()
                        .get("drover.dev/nvidia-gpu")
                        .getAmount())
                .isEqualTo("1");
        int written = api.patches.size();

        registrar.nudge(); // nothing changed: nothing written
        held.view = HeldByPods.View.NONE;
        registrar.nudge();
        await().atMost(Duration.ofSeconds(10))
                .until(() -> !node().getMetadata().getAnnotations().containsKey("drover.dev/devices-held-by-pods"));
        assertThat(node().getStatus()
                        .getAllocatable()
                        .get("drover.dev/nvidia-gpu")
                        .getAmount())
                .isEqualTo("2");
        assertThat(api.patches.size() - written).isEqualTo(1);
    }

    @Test
    void whileNoOneCanSayWhatPodsHoldNoGpuIsAllocatable() throws Exception {
        Held held = new Held();
        held.view = HeldByPods.View.unknown("the kubelet's PodResources API at x did not answer within 5000 ms");
        start(twoGpus(), Map.of());
        registrar.heldByPods(held);

        await().atMost(Duration.ofSeconds(10))
                .until(() ->
                        "unknown".equals(node().getMetadata().getAnnotations().get("drover.dev/devices-held-by-pods")));
        assertThat(node().getStatus()
                        .getAllocatable()
                        .get("drover.dev/nvidia-gpu")
                        .getAmount())
                .isEqualTo("0");
        assertThat(node().getStatus().getCapacity().get("drover.dev/nvidia-gpu").getAmount())
                .isEqualTo("2");
    }
}
