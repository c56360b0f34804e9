package dev.drover.controller;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.deviceplugin.AttributeValue;
import dev.drover.deviceplugin.DeviceGroup;
import dev.drover.deviceplugin.DeviceInstance;
import dev.drover.deviceplugin.Unit;
import dev.drover.devices.DeviceManager;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.net.InetAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

class NodeRegistrarTest {

    static final DeviceGroup T4 = new DeviceGroup(
            "nvidia",
            "gpu",
            "Tesla T4",
            Map.of(
                    "memory",
                    AttributeValue.integer(15360, Unit.MIB),
                    "driver_version",
                    AttributeValue.text("550.54.15")),
            List.of(DeviceInstance.healthy("GPU-a"), DeviceInstance.healthy("GPU-b")));

    static DeviceManager.Device device(String id, boolean healthy) {
        return new DeviceManager.Device("fake", T4, new DeviceInstance(id, healthy, "", Optional.empty()), healthy, "");
    }

    @Test
    void capacityCountsHealthyInstancesAndLabelsDescribeTheGpus() throws Exception {
        JsonNode patch = new ObjectMapper()
                .readTree(NodeRegistrar.patch(Map.of("GPU-a", device("GPU-a", true), "GPU-b", device("GPU-b", false))));
        assertThat(patch.at("/status/capacity/drover.dev~1nvidia-gpu").asText()).isEqualTo("1");
        assertThat(patch.at("/status/allocatable/drover.dev~1nvidia-gpu").asText())
                .isEqualTo("1");
        assertThat(patch.at("/metadata/labels/drover.dev~1gpu.product").asText())
                .isEqualTo("Tesla-T4");
        assertThat(patch.at("/metadata/labels/drover.dev~1gpu.count").asText()).isEqualTo("2");
        assertThat(patch.at("/metadata/labels/drover.dev~1gpu.memory").asText()).isEqualTo("15360MiB");
        assertThat(patch.at("/metadata/labels/drover.dev~1gpu.driver").asText()).isEqualTo("550.54.15");
    }

    @Test
    void theApiIsAdvertisedInAnnotationsWithOrWithoutDevices() throws Exception {
        Map<String, String> api =
                Map.of("drover.dev/agent-api-port", "4646", "drover.dev/agent-certificate-sha256", "ab".repeat(32));
        JsonNode alone = new ObjectMapper().readTree(NodeRegistrar.annotationsPatch(api));
        assertThat(alone.path("metadata")
                        .path("annotations")
                        .path("drover.dev/agent-api-port")
                        .asText())
                .isEqualTo("4646");
        assertThat(alone.has("status"))
                .as("an agent without devices writes no capacity")
                .isFalse();
        JsonNode both = new ObjectMapper().readTree(NodeRegistrar.patch(Map.of("GPU-a", device("GPU-a", true)), api));
        assertThat(both.path("metadata")
                        .path("annotations")
                        .path("drover.dev/agent-certificate-sha256")
                        .asText())
                .hasSize(64);
        assertThat(both.path("status")
                        .path("capacity")
                        .path("drover.dev/nvidia-gpu")
                        .asText())
                .isEqualTo("1");
    }

    @Test
    void aRenewedCertificatesFingerprintIsWrittenToTheNodeAtOnce() throws Exception {
        KubernetesMockServer server = new KubernetesMockServer(false);
        server.start(InetAddress.getLoopbackAddress(), 0);
        List<JsonNode> patches = new CopyOnWriteArrayList<>();
        server.expect()
                .get()
                .withPath("/api/v1/nodes/node-a")
                .andReturn(
                        200,
                        new NodeBuilder()
                                .withNewMetadata()
                                .withName("node-a")
                                .endMetadata()
                                .build())
                .always();
        server.expect()
                .patch()
                .withPath("/api/v1/nodes/node-a/status")
                .andReply(200, request -> {
                    try {
                        patches.add(
                                new ObjectMapper().readTree(request.getBody().readUtf8()));
                    } catch (java.io.IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                    return new NodeBuilder()
                            .withNewMetadata()
                            .withName("node-a")
                            .endMetadata()
                            .build();
                })
                .always();
        try (KubernetesClient client = server.createClient(new JdkHttpClientFactory());
                NodeRegistrar registrar = new NodeRegistrar(
                        client,
                        "node-a",
                        null,
                        Map.of(
                                "drover.dev/agent-api-port",
                                "4646",
                                "drover.dev/agent-certificate-sha256",
                                "aa".repeat(32)),
                        Duration.ofHours(1))) {
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> patches.size() == 1);
            registrar.annotate(Map.of("drover.dev/agent-certificate-sha256", "bb".repeat(32)));
            assertThat(patches).hasSize(2);
            JsonNode annotations = patches.get(1).path("metadata").path("annotations");
            assertThat(annotations.path("drover.dev/agent-certificate-sha256").asText())
                    .isEqualTo("bb".repeat(32));
            assertThat(annotations.path("drover.dev/agent-api-port").asText()).isEqualTo("4646");
        } finally {
            server.destroy();
        }
    }

    @Test
    void aPluginDownGivesCapacityZero() throws Exception {
        JsonNode patch = new ObjectMapper().readTree(NodeRegistrar.patch(Map.of("GPU-a", device("GPU-a", false))));
        assertThat(patch.at("/status/capacity/drover.dev~1nvidia-gpu").asText()).isEqualTo("0");
    }

    @Test
    void labelValuesAreValidKubernetesLabelValues() {
        assertThat(NodeRegistrar.labelValue("NVIDIA A100-SXM4-80GB (MIG 1g.10gb)"))
                .isEqualTo("NVIDIA-A100-SXM4-80GB-MIG-1g.10gb");
        assertThat(NodeRegistrar.labelValue("x".repeat(80))).hasSize(63);
    }
}
