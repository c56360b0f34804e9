package dev.drover.allocrunner;

import dev.drover.api.v1alpha1.ClientStatus;
import dev.drover.api.v1alpha1.TaskState;
import java.util.Map;

/**
 * What the alloc runner made of its allocation: the dynamic half, kept apart
 * from the spec ({@link AllocRunner#alloc()}).
 *
 * @param version increases with every change, so a writer can tell newer from older
 */
public record AllocState(
        long version,
        ClientStatus clientStatus,
        String clientDescription,
        long observedGeneration,
        Map<String, TaskState> taskStates) {

    public AllocState {
        taskStates = Map.copyOf(taskStates);
    }

    /** Whether every task is dead: none of them can use anything of the allocation any more. */
    public boolean allDead() {
        return taskStates.values().stream().allMatch(s -> s.getState() == TaskState.State.Dead);
    }
}
