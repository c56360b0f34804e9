package dev.drover.allocrunner;

import dev.drover.api.v1alpha1.ClientStatus;
import dev.drover.api.v1alpha1.NetworkStatus;
import dev.drover.api.v1alpha1.TaskState;
import java.util.Map;

/**
 * What the alloc runner made of its allocation: the dynamic half, kept apart
 * from the spec ({@link AllocRunner#alloc()}).
 *
 * @param version increases with every change, so a writer can tell newer from older
 * @param network the network the allocation's agent gave it; null before it is known
 */
public record AllocState(
        long version,
        ClientStatus clientStatus,
        String clientDescription,
        long observedGeneration,
        Map<String, TaskState> taskStates,
        NetworkStatus network) {

    public AllocState {
        taskStates = Map.copyOf(taskStates);
    }

    /** A state that reports no network. */
    public AllocState(
            long version,
            ClientStatus clientStatus,
            String clientDescription,
            long observedGeneration,
            Map<String, TaskState> taskStates) {
        this(version, clientStatus, clientDescription, observedGeneration, taskStates, null);
    }

    /** Whether every task is dead: none of them can use anything of the allocation any more. */
    public boolean allDead() {
        return taskStates.values().stream().allMatch(s -> s.getState() == TaskState.State.Dead);
    }
}
