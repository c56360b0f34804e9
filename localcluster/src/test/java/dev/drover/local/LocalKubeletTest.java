package dev.drover.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.PodResource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The local kubelet on a 1.35 server whose node has 4 CPUs and 8 GiB: Pods bound to it are admitted or rejected as
 * a kubelet admits them, and resized through {@code pods/resize} as its allocation manager decides.
 */
class LocalKubeletTest {

    static LocalApiServer server;
    static KubernetesClient client;

    @BeforeAll
    static void start() throws Exception {
        server = LocalApiServer.start(LocalApiServer.Options.defaults()
                .withNodes(List.of("n"))
                .withKubeVersion("1.35")
                .withNodeAllocatable("cpu=4,memory=8Gi"));
        client = server.client();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @AfterEach
    void deletePods() {
        client.pods().inNamespace("default").delete();
        client.pods().inNamespace("default").waitUntilCondition(p -> p == null, 10, TimeUnit.SECONDS);
    }

    static Pod pod(String name, String cpu, String cpuLimit) {
        PodBuilder b = new PodBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace("default")
                .endMetadata()
                .withNewSpec()
                .withNodeName("n")
                .addNewContainer()
                .withName("c")
                .withImage("registry.k8s.io/pause:3.10")
                .withNewResources()
                .withRequests(Map.of("cpu", new Quantity(cpu), "memory", new Quantity("1Gi")))
                .endResources()
                .endContainer()
                .endSpec();
        if (cpuLimit != null) {
            b.editSpec()
                    .editFirstContainer()
                    .editResources()
                    .withLimits(Map.of("cpu", new Quantity(cpuLimit), "memory", new Quantity("1Gi")))
                    .endResources()
                    .endContainer()
                    .endSpec();
        }
        return b.build();
    }

    static PodResource named(String name) {
        return client.pods().inNamespace("default").withName(name);
    }

    static Pod created(String name, String cpu) {
        client.resource(pod(name, cpu, null)).create();
        return until(name, p -> p.getStatus() != null && p.getStatus().getPhase() != null);
    }

    static Pod until(String name, Predicate<Pod> condition) {
        return named(name).waitUntilCondition(p -> p != null && condition.test(p), 10, TimeUnit.SECONDS);
    }

    static Pod resizeCpu(String name, String cpu) {
        return named(name)
                .subresource("resize")
                .patch(
                        PatchContext.of(PatchType.JSON),
                        "[{\"op\":\"test\",\"path\":\"/spec/containers/0/name\",\"value\":\"c\"},"
                                + "{\"op\":\"replace\",\"path\":\"/spec/containers/0/resources/requests/cpu\","
                                + "\"value\":\"" + cpu + "\"}]");
    }

    static PodCondition resizePending(Pod pod) {
        return pod.getStatus().getConditions().stream()
                .filter(c -> c.getType().equals("PodResizePending"))
                .findFirst()
                .orElse(null);
    }

    static String allocatedCpu(Pod pod) {
        return pod.getStatus()
                .getContainerStatuses()
                .getFirst()
                .getAllocatedResources()
                .get("cpu")
                .toString();
    }

    @Test
    void aPodThatFitsRunsAndOneOverTheNodesAllocatableFailsOutOfcpu() {
        Pod first = created("first", "3");
        assertThat(first.getStatus().getPhase()).isEqualTo("Running");
        assertThat(allocatedCpu(first)).isEqualTo("3");
        assertThat(first.getStatus().getObservedGeneration()).isEqualTo(1L);

        Pod second = created("second", "2");
        assertThat(second.getStatus().getPhase()).isEqualTo("Failed");
        assertThat(second.getStatus().getReason()).isEqualTo("OutOfcpu");
        assertThat(second.getStatus().getMessage())
                .isEqualTo("Pod was rejected: Node didn't have enough resource: cpu, requested: 2000, used: 3000,"
                        + " capacity: 4000");
    }

    @Test
    void aResizeThatFitsIsAllocatedAndObservedAtItsGeneration() {
        created("grow", "1");
        Pod patched = resizeCpu("grow", "2");
        assertThat(patched.getMetadata().getGeneration()).isEqualTo(2L);
        Pod resized = until("grow", p -> allocatedCpu(p).equals("2"));
        assertThat(resized.getStatus().getObservedGeneration()).isEqualTo(2L);
        assertThat(resized.getStatus()
                        .getContainerStatuses()
                        .getFirst()
                        .getResources()
                        .getRequests())
                .containsEntry("cpu", new Quantity("2"));
        assertThat(resizePending(resized)).isNull();
    }

    @Test
    void aResizeBeyondTheNodeIsInfeasibleAndKeepsWhatWasAllocated() {
        created("huge", "1");
        resizeCpu("huge", "5");
        Pod pending = until("huge", p -> resizePending(p) != null);
        assertThat(resizePending(pending).getReason()).isEqualTo("Infeasible");
        assertThat(resizePending(pending).getMessage())
                .isEqualTo("Node didn't have enough capacity: cpu, requested: 5000, capacity: 4000");
        assertThat(resizePending(pending).getObservedGeneration()).isEqualTo(2L);
        assertThat(allocatedCpu(pending)).isEqualTo("1");
    }

    @Test
    void aDeferredResizeIsAcceptedOnceAnotherPodIsDeleted() {
        created("other", "2");
        created("mine", "1");
        resizeCpu("mine", "2500m");
        Pod deferred = until("mine", p -> resizePending(p) != null);
        assertThat(resizePending(deferred).getReason()).isEqualTo("Deferred");
        assertThat(resizePending(deferred).getMessage())
                .isEqualTo("Node didn't have enough resource: cpu, requested: 2500, used: 2000, capacity: 4000");

        named("other").delete();
        Pod accepted = until("mine", p -> resizePending(p) == null);
        assertThat(allocatedCpu(accepted)).isEqualTo("2500m");
    }

    @Test
    void aLaterResizeReplacesAPendingOne() {
        created("again", "1");
        resizeCpu("again", "5");
        until("again", p -> resizePending(p) != null);
        resizeCpu("again", "1500m");
        Pod accepted =
                until("again", p -> resizePending(p) == null && allocatedCpu(p).equals("1500m"));
        assertThat(accepted.getStatus().getObservedGeneration()).isEqualTo(3L);
    }

    @Test
    void aResizeThatWouldChangeTheQosClassIsRefused() {
        client.resource(pod("guaranteed", "1", "1")).create();
        until(
                "guaranteed",
                p -> p.getStatus() != null && "Running".equals(p.getStatus().getPhase()));
        assertThatThrownBy(() -> resizeCpu("guaranteed", "500m"))
                .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
                    assertThat(e.getCode()).isEqualTo(422);
                    assertThat(e.getStatus().getMessage())
                            .isEqualTo("Pod \"guaranteed\" is invalid: spec: Invalid value: \"Guaranteed\": Pod QOS"
                                    + " Class may not change as a result of resizing");
                });
    }

    @Test
    void aResizeOfAResourceOtherThanCpuOrMemoryIsRefusedAndAnImageChangeIgnored() {
        created("other-resources", "1");
        assertThatThrownBy(() -> named("other-resources")
                        .subresource("resize")
                        .patch(
                                PatchContext.of(PatchType.JSON),
                                "[{\"op\":\"add\",\"path\":\"/spec/containers/0/resources/requests/ephemeral-storage\","
                                        + "\"value\":\"1Gi\"}]"))
                .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
                    assertThat(e.getCode()).isEqualTo(422);
                    assertThat(e.getStatus().getMessage())
                            .isEqualTo("Pod \"other-resources\" is invalid: spec: Forbidden: only cpu and memory"
                                    + " resources are mutable");
                });
        // as kube-apiserver's resize strategy: what is not a container's resources is dropped, not refused
        Pod kept = named("other-resources")
                .subresource("resize")
                .patch(
                        PatchContext.of(PatchType.JSON),
                        "[{\"op\":\"replace\",\"path\":\"/spec/containers/0/image\",\"value\":\"busybox\"},"
                                + "{\"op\":\"replace\",\"path\":\"/status/phase\",\"value\":\"Failed\"}]");
        assertThat(kept.getSpec().getContainers().getFirst().getImage()).isEqualTo("registry.k8s.io/pause:3.10");
        assertThat(kept.getStatus().getPhase()).isEqualTo("Running");
        assertThat(kept.getMetadata().getGeneration()).isEqualTo(1L);
    }

    @Test
    void aRequestAboveItsLimitIsRefused() {
        client.resource(pod("limited", "1", "2")).create();
        until(
                "limited",
                p -> p.getStatus() != null && "Running".equals(p.getStatus().getPhase()));
        assertThatThrownBy(() -> resizeCpu("limited", "3"))
                .isInstanceOfSatisfying(
                        KubernetesClientException.class,
                        e -> assertThat(e.getStatus().getMessage())
                                .isEqualTo("Pod \"limited\" is invalid: spec.containers[0].resources.requests: Invalid"
                                        + " value: \"3\": must be less than or equal to cpu limit of 2"));
    }

    @Test
    void aNodeAllocatableThatIsNotCpuMemoryOrPodsWithAQuantityIsRefusedSayingWhich() {
        assertThat(NodeAllocatable.parse("cpu=4, memory=8Gi,pods=20"))
                .containsExactly(Map.entry("cpu", "4"), Map.entry("memory", "8Gi"), Map.entry("pods", "20"));
        assertThatThrownBy(() -> LocalApiServer.Options.defaults().withNodeAllocatable("cpu=4,gpu=1"))
                .hasMessage("\"gpu=1\" is not RESOURCE=QUANTITY for cpu, memory or pods (e.g. cpu=4,memory=8Gi)");
        assertThatThrownBy(() -> NodeAllocatable.parse("memory=lots"))
                .hasMessage("\"memory=lots\" is not RESOURCE=QUANTITY for cpu, memory or pods (e.g. cpu=4,memory=8Gi)");
    }

    @Test
    void discoveryListsPodsResize() {
        assertThat(client.getApiResources("v1").getResources()).anySatisfy(r -> {
            assertThat(r.getName()).isEqualTo("pods/resize");
            assertThat(r.getVerbs()).containsExactly("get", "patch", "update");
        });
    }
}
