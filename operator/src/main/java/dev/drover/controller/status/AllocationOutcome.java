package dev.drover.controller.status;

import dev.drover.api.v1alpha1.ClientStatus;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.api.v1alpha1.TaskState;
import dev.drover.common.UserText;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * How a terminal allocation ended, for its {@code Complete} or {@code Failed} condition (as a Job has): a
 * {@code Complete} allocation says how each task ended, a {@code Failed} one names the task that failed and the
 * event that made it fail. Built only from the tasks' stored states, so an agent that restarts builds the same.
 *
 * @param type    {@link #COMPLETE} or {@link #FAILED}
 * @param reason  {@link #TASKS_COMPLETE}; or why it failed: {@code RestartsExhausted}, {@code SetupFailure},
 *                {@code FailedValidation}, {@code DriverFailure}, {@code FailedRestoringTask}, {@code TaskFailed}
 * @param message a sentence naming the tasks (cut)
 */
record AllocationOutcome(String type, String reason, String message) {

    static final String COMPLETE = "Complete";
    static final String FAILED = "Failed";
    static final String TASKS_COMPLETE = "TasksComplete";
    static final String TASK_FAILED = "TaskFailed";
    static final String RESTARTS_EXHAUSTED = "RestartsExhausted";

    /** The most of an event's message the condition repeats. */
    static final int EVENT_MESSAGE_LIMIT = 300;

    /** Events that say why a task failed, named as the condition's reason. */
    private static final Set<TaskEventType> CAUSES = Set.of(
            TaskEventType.SetupFailure,
            TaskEventType.FailedValidation,
            TaskEventType.DriverFailure,
            TaskEventType.FailedRestoringTask);

    /** Events that say why a task was killed though it did not fail. */
    private static final Set<TaskEventType> KILL_CAUSES =
            Set.of(TaskEventType.SiblingTaskFailed, TaskEventType.LeaderTaskDead, TaskEventType.MainTasksDead);

    /** The outcome of an allocation whose runner reports {@code status}; empty while it is not over. */
    static Optional<AllocationOutcome> of(ClientStatus status, List<Task> tasks, Map<String, TaskState> states) {
        if (status == ClientStatus.Complete) {
            return Optional.of(complete(tasks, states));
        }
        if (status == ClientStatus.Failed) {
            return Optional.of(failed(tasks, states));
        }
        return Optional.empty();
    }

    /** An allocation that failed before any task ran (refused, or not admitted). */
    static AllocationOutcome failedBeforeRunning(String reason, String message) {
        return new AllocationOutcome(FAILED, reason, message);
    }

    private static AllocationOutcome complete(List<Task> tasks, Map<String, TaskState> states) {
        List<String> ended = new ArrayList<>();
        for (Task t : tasks) {
            TaskState ts = states.get(t.getName());
            if (ts != null) {
                ended.add(UserText.quote(t.getName()) + " " + howItEnded(ts.getEvents()));
            }
        }
        return new AllocationOutcome(
                COMPLETE,
                TASKS_COMPLETE,
                ended.isEmpty()
                        ? "All tasks have completed"
                        : "All tasks have completed: " + UserText.join(ended, "; "));
    }

    private static AllocationOutcome failed(List<Task> tasks, Map<String, TaskState> states) {
        for (Task t : tasks) {
            TaskState ts = states.get(t.getName());
            if (ts != null && ts.getState() == TaskState.State.Dead && Boolean.TRUE.equals(ts.getFailed())) {
                return failedTask(t.getName(), ts.getEvents());
            }
        }
        return new AllocationOutcome(FAILED, TASK_FAILED, "Failed tasks");
    }

    private static AllocationOutcome failedTask(String task, List<TaskEvent> events) {
        String who = "Task " + UserText.quote(task) + " failed";
        TaskEvent last = newest(events, null);
        if (last == null) {
            return new AllocationOutcome(FAILED, TASK_FAILED, who);
        }
        String reason = last.getType() == TaskEventType.NotRestarting
                ? RESTARTS_EXHAUSTED
                : CAUSES.contains(last.getType()) ? last.getType().name() : TASK_FAILED;
        StringBuilder message = new StringBuilder(who).append(": ").append(last.getType());
        if (last.getMessage() != null && !last.getMessage().isEmpty()) {
            message.append(": ").append(UserText.cutEscaped(last.getMessage(), EVENT_MESSAGE_LIMIT));
        }
        TaskEvent exit = newest(events, Set.of(TaskEventType.Terminated));
        if (exit != null && exit != last) {
            message.append("; it last ").append(exited(exit));
        }
        return new AllocationOutcome(FAILED, reason, message.toString());
    }

    /** "exited with code 0", "was killed (LeaderTaskDead)", "ended". */
    private static String howItEnded(List<TaskEvent> events) {
        TaskEvent end = newest(events, Set.of(TaskEventType.Terminated, TaskEventType.Killed));
        if (end == null) {
            return "ended";
        }
        if (end.getType() == TaskEventType.Terminated) {
            return exited(end);
        }
        TaskEvent cause = newest(events, KILL_CAUSES);
        return cause == null ? "was killed" : "was killed (" + cause.getType() + ")";
    }

    private static String exited(TaskEvent e) {
        String how = e.getExitCode() == null ? "exited" : "exited with code " + e.getExitCode();
        return e.getSignal() == null ? how : how + " (signal " + UserText.bare(e.getSignal()) + ")";
    }

    /** The newest event of one of {@code types} (any when null), or null. */
    private static TaskEvent newest(List<TaskEvent> events, Set<TaskEventType> types) {
        if (events == null) {
            return null;
        }
        for (TaskEvent e : events.reversed()) {
            if (e != null && e.getType() != null && (types == null || types.contains(e.getType()))) {
                return e;
            }
        }
        return null;
    }
}
