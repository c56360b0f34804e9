package dev.drover.allocrunner;

import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskState;
import dev.drover.state.StoredAllocation;
import dev.drover.state.StoredTask;
import dev.drover.state.TaskLocalState;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What an alloc runner rebuilt after an agent restart finds stored of its tasks: the state and local state of each
 * task that has both (the others start as new), and whether the prerun hooks were done before the restart.
 *
 * @param prerunDone a task had started. Tasks start only after the prerun hooks (the previous allocation's wait and
 *                   migration), so a restored allocation none of whose tasks ever started has not finished them:
 *                   every task runner stores {@code Received} before the wait
 */
record RestoredTasks(Map<String, TaskState> states, Map<String, TaskLocalState> localStates, boolean prerunDone) {

    static final RestoredTasks NONE = new RestoredTasks(Map.of(), Map.of(), false);

    static RestoredTasks of(List<Task> tasks, StoredAllocation stored) {
        Map<String, TaskState> states = new LinkedHashMap<>();
        Map<String, TaskLocalState> localStates = new LinkedHashMap<>();
        for (Task t : tasks) {
            StoredTask saved = stored.tasks().get(t.getName());
            if (saved != null && saved.state().isPresent() && saved.localState().isPresent()) {
                states.put(t.getName(), saved.state().get());
                localStates.put(t.getName(), saved.localState().get());
            }
        }
        return new RestoredTasks(states, localStates, states.values().stream().anyMatch(RestoredTasks::everStarted));
    }

    private static boolean everStarted(TaskState state) {
        return state.getState() != TaskState.State.Pending || state.getStartedAt() != null;
    }
}
