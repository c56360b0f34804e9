package dev.drover.allocrunner;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.Task;
import dev.drover.state.AllocId;
import dev.drover.taskrunner.TaskRunner;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** What a newer spec of a running allocation changes for its tasks. */
final class SpecChanges {

    private static final Logger LOG = LoggerFactory.getLogger(SpecChanges.class);

    private SpecChanges() {}

    /**
     * A spec change restarts only the tasks whose definition changed, with their new
     * definition. Tasks cannot be added or removed in place: that takes a new allocation.
     */
    static void restartChangedTasks(AllocId id, Allocation was, Allocation newer, Map<String, TaskRunner> tasks) {
        for (Task before : was.getSpec().getTasks()) {
            Task now = newer.getSpec().task(before.getName());
            if (now != null && !now.equals(before)) {
                tasks.get(before.getName())
                        .update(
                                now,
                                newer.getSpec(),
                                "Task definition changed (generation "
                                        + newer.getMetadata().getGeneration() + ")");
            }
        }
        List<String> before =
                was.getSpec().getTasks().stream().map(Task::getName).sorted().toList();
        List<String> after =
                newer.getSpec().getTasks().stream().map(Task::getName).sorted().toList();
        if (!before.equals(after)) {
            LOG.warn(
                    "allocation {}: tasks {} became {}; adding or removing tasks needs a new allocation, the change"
                            + " is ignored for the tasks concerned",
                    id,
                    before,
                    after);
        }
    }
}
