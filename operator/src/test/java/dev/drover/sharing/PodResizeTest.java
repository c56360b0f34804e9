package dev.drover.sharing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.admission.CpuMemory;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.fabric8.kubernetes.client.utils.Serialization;
import org.junit.jupiter.api.Test;

/** How the kubelet's answer to a resize of the reservation container is read from the agent's Pod. */
class PodResizeTest {

    private static ResizedPod pod(long observed, String allocatedCpu, String condition) {
        return Serialization.unmarshal("""
                metadata: {name: drover-x, namespace: drover, generation: 7}
                status:
                  observedGeneration: %d
                  conditions: [%s]
                  containerStatuses:
                  - name: agent
                    allocatedResources: {cpu: 100m, memory: 200Mi}
                  - name: reservation
                    allocatedResources: {cpu: %s, memory: 512Mi}
                """.formatted(observed, condition, allocatedCpu), ResizedPod.class);
    }

    private static final CpuMemory TARGET = new CpuMemory(1500, 512);

    @Test
    void theReservationsAllocatedRequestsBeingTheNewOnesIsAnAcceptance() {
        assertThat(PodResize.answer(pod(6, "1500m", ""), TARGET, 7))
                .hasValueSatisfying(a -> assertThat(a.accepted()).isTrue());
        assertThat(PodResize.answer(pod(6, "1.5", ""), TARGET, 7))
                .as("the same amount written otherwise")
                .hasValueSatisfying(a -> assertThat(a.accepted()).isTrue());
    }

    @Test
    void aPendingConditionOfTheResizesGenerationIsARefusalInTheKubeletsWords() {
        String deferred = "{type: PodResizePending, status: 'True', observedGeneration: 7, reason: Deferred,"
                + " message: \"Node didn't have enough resource: cpu, requested: 1500, used: 3000, capacity: 4000\"}";

        assertThat(PodResize.answer(pod(7, "500m", deferred), TARGET, 7)).hasValueSatisfying(a -> {
            assertThat(a.accepted()).isFalse();
            assertThat(a.reason()).isEqualTo("Deferred");
            assertThat(a.message()).startsWith("Node didn't have enough resource: cpu");
        });
    }

    @Test
    void aPendingConditionOfAnEarlierResizeIsNoAnswerYet() {
        String stale = "{type: PodResizePending, status: 'True', observedGeneration: 6, reason: Infeasible,"
                + " message: old}";

        assertThat(PodResize.answer(pod(6, "500m", stale), TARGET, 7)).isEmpty();
    }

    @Test
    void theKubeletHavingSeenTheGenerationWithNothingPendingIsAnAcceptance() {
        assertThat(PodResize.answer(pod(7, "500m", ""), TARGET, 7))
                .hasValueSatisfying(a -> assertThat(a.accepted()).isTrue());
        assertThat(PodResize.answer(pod(6, "500m", ""), TARGET, 7))
                .as("not seen yet")
                .isEmpty();
    }

    @Test
    void aWholePodAsTheApiServerSendsItIsReadForWhatAResizeNeeds() {
        GenericKubernetesResource sent = Serialization.unmarshal("""
                apiVersion: v1
                kind: Pod
                metadata: {name: drover-x, namespace: drover, generation: 7, uid: 1f0c, labels: {app: drover}}
                spec:
                  nodeName: node-1
                  containers:
                  - {name: agent, image: drover:1, resources: {requests: {cpu: 100m}}}
                  - {name: reservation, image: pause:3, resources: {requests: {cpu: 1500m, memory: 512Mi}}}
                status:
                  phase: Running
                  observedGeneration: 7
                  conditions: [{type: Ready, status: 'True', lastTransitionTime: '2026-12-07T10:00:00Z'}]
                  containerStatuses:
                  - {name: agent, ready: true, allocatedResources: {cpu: 100m}}
                  - {name: reservation, ready: true, allocatedResources: {cpu: 1500m, memory: 512Mi}}
                """, GenericKubernetesResource.class);

        ResizedPod p = PodResize.read(new KubernetesSerialization(), sent);

        assertThat(p.metadata().generation()).isEqualTo(7L);
        assertThat(p.containers()).extracting(ResizedPod.Container::name).containsExactly("agent", "reservation");
        assertThat(PodResize.allocatedOf(p)).contains(TARGET);
        assertThat(PodResize.answer(p, TARGET, 7))
                .hasValueSatisfying(a -> assertThat(a.accepted()).isTrue());
        assertThat(PodResize.read(new KubernetesSerialization(), null))
                .as("a Pod that is gone")
                .isNull();
    }
}
