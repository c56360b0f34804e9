package dev.drover.allocrunner;

import dev.drover.api.v1alpha1.ClientStatus;
import dev.drover.api.v1alpha1.TaskState;
import java.util.Collection;

/** The allocation's client status from its tasks' states (docs/semantics.md, Allocation status). */
public final class ClientStatuses {

    /** A client status and the sentence that goes with it. */
    public record Result(ClientStatus status, String description) {}

    private ClientStatuses() {}

    public static Result of(Collection<TaskState> tasks) {
        boolean running = false;
        boolean pending = false;
        for (TaskState t : tasks) {
            TaskState.State s = t.getState() == null ? TaskState.State.Pending : t.getState();
            if (s == TaskState.State.Dead && Boolean.TRUE.equals(t.getFailed())) {
                return new Result(ClientStatus.Failed, "Failed tasks");
            }
            running |= s == TaskState.State.Running;
            pending |= s == TaskState.State.Pending;
        }
        if (running) {
            return new Result(ClientStatus.Running, "Tasks are running");
        }
        if (pending) {
            return new Result(ClientStatus.Pending, "No tasks have started");
        }
        return new Result(ClientStatus.Complete, "All tasks have completed");
    }
}
