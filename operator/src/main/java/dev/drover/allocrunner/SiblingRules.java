package dev.drover.allocrunner;

import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskEventType;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * What a task's death means for its siblings, the rules checked in this order: a task that failed kills the others
 * (SiblingTaskFailed); a leader that ended without failing kills them (LeaderTaskDead); main tasks all dead while
 * sidecars live kill the sidecars (MainTasksDead). Poststop tasks take no part. A decision without side effects:
 * the runner kills, once.
 */
final class SiblingRules {

    private SiblingRules() {}

    /** The event every killed task records, when the states call for a kill. */
    static Optional<Supplier<TaskEvent>> killCause(
            List<Task> tasks, Map<String, LifecycleCoordinator.Status> statuses, InstantSource clock) {
        List<Task> nonPoststop = tasks.stream()
                .filter(t -> LifecycleCoordinator.gateOf(t) != LifecycleCoordinator.Gate.POSTSTOP)
                .toList();
        for (Task t : nonPoststop) {
            LifecycleCoordinator.Status s = statuses.get(t.getName());
            if (s.dead() && s.failed()) {
                return Optional.of(() -> TaskEvent.of(TaskEventType.SiblingTaskFailed, clock.instant())
                        .withFailedSibling(t.getName())
                        .withMessage("Task's sibling \"" + t.getName() + "\" failed"));
            }
        }
        for (Task t : nonPoststop) {
            LifecycleCoordinator.Status s = statuses.get(t.getName());
            if (t.isLeaderTask() && s.dead() && !s.failed()) {
                return Optional.of(() -> TaskEvent.of(TaskEventType.LeaderTaskDead, clock.instant())
                        .withMessage("Leader Task in Group dead"));
            }
        }
        boolean anyLive = false;
        boolean onlySidecarsLive = true;
        for (Task t : nonPoststop) {
            if (!statuses.get(t.getName()).dead()) {
                anyLive = true;
                onlySidecarsLive &= t.isSidecar();
            }
        }
        if (anyLive && onlySidecarsLive) {
            return Optional.of(() -> TaskEvent.of(TaskEventType.MainTasksDead, clock.instant())
                    .withMessage("Main tasks in the group died"));
        }
        return Optional.empty();
    }
}
