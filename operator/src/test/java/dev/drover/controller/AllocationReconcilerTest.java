package dev.drover.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.api.v1alpha1.Allocation;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Which updates of an Allocation reach the controller. */
class AllocationReconcilerTest {

    static Allocation at(long generation, Map<String, String> annotations) {
        Allocation a = new Allocation();
        a.setMetadata(new ObjectMetaBuilder()
                .withName("web")
                .withGeneration(generation)
                .withAnnotations(annotations)
                .withFinalizers(List.of(AllocationReconciler.FINALIZER))
                .build());
        return a;
    }

    @Test
    void aNewRestartAnnotationIsNewsThoughTheGenerationStaysAndTheAgentsOwnStatusWriteIsNot() {
        Allocation before = at(3, Map.of("drover.dev/restartedAt", "1"));
        assertThat(AllocationReconciler.news(at(3, Map.of("drover.dev/restartedAt", "2")), before))
                .isTrue();
        assertThat(AllocationReconciler.news(at(3, Map.of("drover.dev/restartedAt", "1", "other", "x")), before))
                .isFalse();
        assertThat(AllocationReconciler.news(at(4, Map.of("drover.dev/restartedAt", "1")), before))
                .isTrue();
        Allocation deleting = at(3, Map.of("drover.dev/restartedAt", "1"));
        deleting.getMetadata().setDeletionTimestamp("2026-01-01T00:00:00Z");
        assertThat(AllocationReconciler.news(deleting, before)).isTrue();
    }

    @Test
    void theAgentAddingItsOwnFinalizerIsNoNewsAndAnyOtherFinalizerChangeIs() {
        Allocation without = at(3, Map.of());
        without.getMetadata().setFinalizers(List.of());
        Allocation other = at(3, Map.of());
        other.getMetadata().setFinalizers(List.of("example.com/keep"));
        Allocation otherAndOurs = at(3, Map.of());
        otherAndOurs.getMetadata().setFinalizers(List.of("example.com/keep", AllocationReconciler.FINALIZER));

        assertThat(AllocationReconciler.news(at(3, Map.of()), without))
                .as("the reconcile that added it has run")
                .isFalse();
        assertThat(AllocationReconciler.news(otherAndOurs, other)).isFalse();
        assertThat(AllocationReconciler.news(without, at(3, Map.of())))
                .as("ours removed: added again")
                .isTrue();
        assertThat(AllocationReconciler.news(otherAndOurs, at(3, Map.of()))).isTrue();
    }
}
