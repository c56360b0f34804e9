package dev.drover.sharing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.admission.CpuMemory;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.utils.Serialization;
import org.junit.jupiter.api.Test;

/** How the kubelet's answer to a resize of the reservation container is read from the agent's Pod. */
class PodResizeTest {

    private static Pod pod(long observed, String allocatedCpu, String condition) {
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
                """.formatted(observed, condition, allocatedCpu), Pod.class);
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
}
