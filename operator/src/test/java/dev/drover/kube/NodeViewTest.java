package dev.drover.kube;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class NodeViewTest {

    private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

    /** A Node as a kubelet's API server sends it, with fields the agent does not read. */
    private static final String NODE = """
            {"apiVersion":"v1","kind":"Node",
             "metadata":{"name":"n1","uid":"u-1","resourceVersion":"7","labels":{"kubernetes.io/os":"linux"},
               "annotations":{"drover.dev/agent-api-port":"4646"},
               "managedFields":[{"manager":"kubelet","operation":"Update","fieldsV1":{"f:status":{}}}]},
             "spec":{"podCIDR":"10.0.0.0/24","taints":[{"key":"k","effect":"NoSchedule"}]},
             "status":{"capacity":{"cpu":"4","memory":"8Gi","drover.dev/nvidia-gpu":"2"},
               "allocatable":{"cpu":"3900m","memory":"7Gi"},
               "addresses":[{"type":"Hostname","address":"n1"},{"type":"ExternalIP","address":"203.0.113.4"},
                 {"type":"InternalIP","address":"10.0.0.4"}],
               "conditions":[{"type":"Ready","status":"True"}],
               "nodeInfo":{"kubeletVersion":"v1.35.0"},"images":[{"names":["a"],"sizeBytes":1}]}}
            """;

    @Test
    void readsTheFieldsTheAgentUsesOfAWholeNode() {
        GenericKubernetesResource generic = SERIALIZATION.unmarshal(NODE, GenericKubernetesResource.class);

        NodeView node = NodeView.of(SERIALIZATION, generic);

        assertThat(node.uid()).isEqualTo("u-1");
        assertThat(node.labels()).containsExactly(Map.entry("kubernetes.io/os", "linux"));
        assertThat(node.annotations()).containsExactly(Map.entry("drover.dev/agent-api-port", "4646"));
        assertThat(node.capacity())
                .containsEntry("cpu", new Quantity("4"))
                .containsEntry("drover.dev/nvidia-gpu", new Quantity("2"));
        assertThat(node.allocatable()).containsEntry("cpu", new Quantity("3900m"));
        assertThat(node.dialled()).containsExactly("10.0.0.4", "203.0.113.4");
    }

    @Test
    void aNodeWithoutStatusOrMetadataMapsHasNone() {
        NodeView node = NodeView.of(
                SERIALIZATION,
                SERIALIZATION.unmarshal("{\"apiVersion\":\"v1\",\"kind\":\"Node\"}", GenericKubernetesResource.class));

        assertThat(node.uid()).isNull();
        assertThat(node.labels()).isNull();
        assertThat(node.capacity()).isNull();
        assertThat(node.dialled()).isEqualTo(List.of());
        assertThat(NodeView.of(SERIALIZATION, null)).isNull();
    }
}
