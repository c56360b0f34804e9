package dev.drover.node;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.deviceplugin.AttributeValue;
import dev.drover.deviceplugin.DeviceGroup;
import dev.drover.deviceplugin.DeviceInstance;
import dev.drover.deviceplugin.Unit;
import dev.drover.devices.DeviceManager;
import dev.drover.kube.NodeView;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** What the agent wants on its Node, and how a Node read from the server differs from it. */
class NodeDriftTest {

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

    static final String CERT = "drover.dev/agent-certificate-sha256";

    static DeviceManager.Device device(String id, boolean healthy) {
        return new DeviceManager.Device("fake", T4, new DeviceInstance(id, healthy, "", Optional.empty()), healthy, "");
    }

    static final NodeFields WANTED = NodeFields.of(
            Map.of("GPU-a", device("GPU-a", true), "GPU-b", device("GPU-b", false)),
            Map.of("drover.dev/agent-api-port", "10346", CERT, "aa".repeat(32)));

    static JsonNode json(String text) throws Exception {
        return new ObjectMapper().readTree(text);
    }

    /** A Node as the agent wants it, with keys of others beside. */
    /** {@code node} as the agent reads it from the API server. */
    static NodeView view(Node node) {
        return NodeView.of(new KubernetesSerialization(), node);
    }

    static NodeBuilder asWanted() {
        return new NodeBuilder()
                .withNewMetadata()
                .withName("node-a")
                .addToLabels(WANTED.labels())
                .addToLabels("team", "a")
                .addToAnnotations(WANTED.annotations())
                .addToAnnotations("example.com/owner", "ops")
                .endMetadata()
                .withNewStatus()
                .addToCapacity("cpu", new Quantity("4"))
                .addToCapacity("drover.dev/nvidia-gpu", new Quantity("1"))
                .addToAllocatable("drover.dev/nvidia-gpu", new Quantity("1"))
                .endStatus();
    }

    @Test
    void capacityCountsHealthyInstancesAndLabelsDescribeTheGpus() {
        assertThat(WANTED.capacity()).containsExactly(Map.entry("drover.dev/nvidia-gpu", "1"));
        assertThat(WANTED.labels())
                .containsEntry("drover.dev/gpu.product", "Tesla-T4")
                .containsEntry("drover.dev/gpu.count", "2")
                .containsEntry("drover.dev/gpu.memory", "15360MiB")
                .containsEntry("drover.dev/gpu.driver", "550.54.15");
    }

    @Test
    void aPluginDownGivesCapacityZeroAndNoPluginsNoCapacity() {
        assertThat(NodeFields.of(Map.of("GPU-a", device("GPU-a", false)), Map.of())
                        .capacity())
                .containsEntry("drover.dev/nvidia-gpu", "0");
        NodeFields none = NodeFields.of(null, Map.of(CERT, "aa".repeat(32)));
        assertThat(none.capacity()).isEmpty();
        assertThat(none.labels()).isEmpty();
    }

    @Test
    void labelValuesAreValidKubernetesLabelValues() {
        assertThat(NodeFields.labelValue("NVIDIA A100-SXM4-80GB (MIG 1g.10gb)"))
                .isEqualTo("NVIDIA-A100-SXM4-80GB-MIG-1g.10gb");
        assertThat(NodeFields.labelValue("x".repeat(80))).hasSize(63);
    }

    @Test
    void aNodeAsWantedHasNoDriftWhateverTheQuantitysForm() {
        assertThat(NodeDrift.between(view(asWanted().build()), WANTED).none()).isTrue();
        NodeFields thousand = new NodeFields(
                WANTED.labels(),
                WANTED.annotations(),
                new java.util.TreeMap<>(Map.of("drover.dev/nvidia-gpu", "1000")));
        Node node = asWanted()
                .editStatus()
                .addToCapacity("drover.dev/nvidia-gpu", new Quantity("1k"))
                .addToAllocatable("drover.dev/nvidia-gpu", new Quantity("1k"))
                .endStatus()
                .build();
        assertThat(NodeDrift.between(view(node), thousand).none()).isTrue();
    }

    @Test
    void aChangedAnnotationAndAMissingLabelAreSetBackAndForeignDroverKeysRemoved() throws Exception {
        Node node = asWanted()
                .editMetadata()
                .addToAnnotations(CERT, "ee".repeat(32))
                .removeFromLabels("drover.dev/gpu.count")
                .addToLabels("drover.dev/zone", "x")
                .endMetadata()
                .editStatus()
                .addToCapacity("drover.dev/amd-gpu", new Quantity("8"))
                .endStatus()
                .build();
        NodeDrift drift = NodeDrift.between(view(node), WANTED);
        assertThat(drift.differences())
                .containsExactly(
                        new NodeDrift.Difference(NodeDrift.Field.LABEL, "drover.dev/gpu.count", null, false),
                        new NodeDrift.Difference(NodeDrift.Field.LABEL, "drover.dev/zone", "x", true),
                        new NodeDrift.Difference(NodeDrift.Field.ANNOTATION, CERT, "ee".repeat(32), false),
                        new NodeDrift.Difference(NodeDrift.Field.CAPACITY, "drover.dev/amd-gpu", "8", true));
        JsonNode patch = json(drift.patch());
        assertThat(patch.at("/metadata/labels/drover.dev~1gpu.count").asText()).isEqualTo("2");
        assertThat(patch.at("/metadata/labels/drover.dev~1zone").isNull())
                .as("removed")
                .isTrue();
        assertThat(patch.at("/metadata/annotations/" + CERT.replace("/", "~1")).asText())
                .isEqualTo("aa".repeat(32));
        assertThat(patch.at("/status/capacity/drover.dev~1amd-gpu").isNull()).isTrue();
        assertThat(patch.at("/status/capacity/drover.dev~1nvidia-gpu").asText()).isEqualTo("1");
        assertThat(patch.at("/status/allocatable/drover.dev~1nvidia-gpu").asText())
                .isEqualTo("1");
        assertThat(patch.at("/status/allocatable").has("drover.dev/amd-gpu"))
                .as("only where it was found")
                .isFalse();
        assertThat(patch.at("/metadata/labels").has("team")).isFalse();
        assertThat(patch.at("/metadata/annotations").has("example.com/owner")).isFalse();
        assertThat(patch.at("/status/capacity").has("cpu")).isFalse();
        assertThat(drift.describe())
                .isEqualTo(
                        "label \"drover.dev/gpu.count\" missing, written; label \"drover.dev/zone\" was \"x\", removed;"
                                + " annotation \"drover.dev/agent-certificate-sha256\" was \"" + "ee".repeat(32)
                                + "\", written; capacity \"drover.dev/amd-gpu\" was \"8\", removed");
    }

    @Test
    void anAgentWithoutDevicesRemovesDroverCapacityButWritesNoStatusOtherwise() throws Exception {
        NodeFields api = NodeFields.of(null, Map.of(CERT, "aa".repeat(32)));
        Node bare = new NodeBuilder()
                .withNewMetadata()
                .withName("node-a")
                .endMetadata()
                .build();
        assertThat(json(NodeDrift.between(view(bare), api).patch()).has("status"))
                .isFalse();
        Node stale = asWanted().build();
        JsonNode patch = json(NodeDrift.between(view(stale), api).patch());
        assertThat(patch.at("/status/capacity/drover.dev~1nvidia-gpu").isNull()).isTrue();
        assertThat(patch.at("/metadata/labels/drover.dev~1gpu.count").isNull()).isTrue();
        assertThat(patch.at("/metadata/annotations/drover.dev~1agent-api-port").isNull())
                .isTrue();
    }

    @Test
    void theLogEscapesAndCutsSomeoneElsesText() {
        String hostile = "line one\nFAKE LOG LINE \u001b[31m\"quoted\"" + "x".repeat(500);
        Node node = asWanted()
                .editMetadata()
                .addToAnnotations(CERT, hostile)
                .endMetadata()
                .build();
        String line = NodeDrift.between(view(node), WANTED).describe();
        assertThat(line)
                .doesNotContain("\n")
                .doesNotContain("\u001b")
                .contains("line one\\u000aFAKE LOG LINE \\u001b[31m\\\"quoted\\\"")
                .contains("… (" + hostile.length() + " chars)")
                .hasSizeLessThan(200);
    }

    @Test
    void aLogLineNamesAtMostSixteenKeys() {
        NodeBuilder many = asWanted().editMetadata().endMetadata();
        for (int i = 0; i < 40; i++) {
            many.editMetadata().addToAnnotations("drover.dev/x" + i, "v").endMetadata();
        }
        String line = NodeDrift.between(view(many.build()), WANTED).describe();
        assertThat(line.split("; ")).hasSize(NodeDrift.LOGGED + 1);
        assertThat(line).endsWith("and 24 more");
    }
}
