package dev.drover.sharing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.admission.CpuMemory;
import dev.drover.admission.NodeAdmission;
import dev.drover.testing.MockApi;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class DedicatedNodeTest {

    private static final CpuMemory MACHINE = new CpuMemory(7900, 15_000);

    private MockApi api;
    private KubernetesClient client;
    private DedicatedNode dedicated;
    private final NodeAdmission admission = new NodeAdmission(MACHINE);
    private final AtomicInteger changes = new AtomicInteger();

    @BeforeEach
    void start() throws Exception {
        api = new MockApi();
        client = api.client();
    }

    @AfterEach
    void stop() {
        if (dedicated != null) {
            dedicated.close();
        }
        api.close();
    }

    private void node(String cpu, String memory) {
        Node n = new NodeBuilder()
                .withNewMetadata()
                .withName("n1")
                .endMetadata()
                .withNewStatus()
                .withAllocatable(Map.of("cpu", new Quantity(cpu), "memory", new Quantity(memory)))
                .endStatus()
                .build();
        client.nodes().resource(n).createOr(c -> c.update());
    }

    private Pod pod(String name, String node, String cpu, String memory) {
        return client.pods()
                .inNamespace("default")
                .resource(new PodBuilder()
                        .withNewMetadata()
                        .withName(name)
                        .withNamespace("default")
                        .endMetadata()
                        .withNewSpec()
                        .withNodeName(node)
                        .addNewContainer()
                        .withName("c")
                        .withImage("busybox")
                        .withNewResources()
                        .withRequests(Map.of("cpu", new Quantity(cpu), "memory", new Quantity(memory)))
                        .endResources()
                        .endContainer()
                        .endSpec()
                        .build())
                .create();
    }

    private void follow() throws InterruptedException {
        dedicated = DedicatedNode.start(client, "n1", admission, MACHINE, changes::incrementAndGet);
    }

    @Test
    void allocationsGetWhatThePodsLeaveOfTheNodeCappedByTheAgentsOwnAllocatable() {
        assertThat(DedicatedNode.allocatable(
                        new CpuMemory(8000, 16_384), Optional.of(new CpuMemory(4000, 8192)), new CpuMemory(3000, 1024)))
                .as("the node less its Pods")
                .isEqualTo(new CpuMemory(1000, 7168));
        assertThat(DedicatedNode.allocatable(
                        new CpuMemory(2000, 1024), Optional.of(new CpuMemory(8000, 8192)), new CpuMemory(500, 256)))
                .as("an operator's cap below what the Pods leave stands whole")
                .isEqualTo(new CpuMemory(2000, 1024));
        assertThat(DedicatedNode.allocatable(MACHINE, Optional.empty(), new CpuMemory(900, 0)))
                .as("a node no kubelet reports on: the agent's own less the Pods'")
                .isEqualTo(new CpuMemory(7000, 15_000));
        assertThat(DedicatedNode.allocatable(MACHINE, Optional.of(new CpuMemory(1000, 1024)), new CpuMemory(3000, 0)))
                .as("never below nothing")
                .isEqualTo(new CpuMemory(0, 1024));
    }
}
