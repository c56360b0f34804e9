package dev.drover.controller.status;

import dev.drover.api.v1alpha1.Check;
import dev.drover.api.v1alpha1.CheckStatus;
import dev.drover.api.v1alpha1.CheckStatus.Status;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskState;
import dev.drover.common.UserText;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Whether an allocation's checks pass, for its {@code Healthy} condition (and so its {@code Ready}): every check of
 * every running task must be passing, and a main task with checks that does not run yet (or runs again soon) has none
 * passing; a task that is done has no checks to pass. The first check
 * that is critical (else the first warning), in the order of the spec, says why not.
 *
 * @param reason  {@code ChecksPassing}, {@code CheckCritical} or {@code CheckWarning}
 * @param message names the task, the check and what its probe said (cut)
 */
record AllocationHealth(boolean healthy, String reason, String message) {

    static final String HEALTHY = "Healthy";
    static final String PASSING = "ChecksPassing";
    static final String CRITICAL = "CheckCritical";
    static final String WARNING = "CheckWarning";
    /** Why Ready is False when only the checks keep it so. */
    static final String UNHEALTHY = "Unhealthy";

    /** The most of a probe's output the condition repeats. */
    static final int OUTPUT_LIMIT = 300;

    static final String NOT_RUNNING = "the task is not running";
    static final String NOT_REPORTED = "no probe has run yet";

    /** The health of an allocation whose tasks have checks; empty when none has any (it has no Healthy condition). */
    static Optional<AllocationHealth> of(List<Task> tasks, Map<String, TaskState> states) {
        if (tasks.stream().allMatch(t -> t.effectiveChecks().isEmpty())) {
            return Optional.empty();
        }
        String warning = null;
        for (Task t : tasks) {
            if (t.effectiveChecks().isEmpty()) {
                continue;
            }
            TaskState ts = states.get(t.getName());
            boolean running = ts != null && ts.getState() == TaskState.State.Running;
            boolean dead = ts != null && ts.getState() == TaskState.State.Dead;
            if (!running && (!t.isMain() || dead)) {
                continue; // a lifecycle task not running, or a task that is done: checks run while their task runs
            }
            for (Check c : t.effectiveChecks().stream().filter(Objects::nonNull).toList()) {
                CheckStatus now = running ? reported(ts, c.getName()) : null;
                Status status = now == null ? Status.CRITICAL : now.getStatus();
                String output = !running ? NOT_RUNNING : now == null ? NOT_REPORTED : now.getOutput();
                if (status == Status.CRITICAL) {
                    return Optional.of(new AllocationHealth(false, CRITICAL, describe(t, c, status, output)));
                }
                if (status == Status.WARNING && warning == null) {
                    warning = describe(t, c, status, output);
                }
            }
        }
        if (warning != null) {
            return Optional.of(new AllocationHealth(false, WARNING, warning));
        }
        return Optional.of(new AllocationHealth(true, PASSING, "Every check of every running task passes"));
    }

    private static CheckStatus reported(TaskState ts, String check) {
        if (ts.getChecks() == null) {
            return null;
        }
        return ts.getChecks().stream()
                .filter(s -> s != null && Objects.equals(check, s.getName()) && s.getStatus() != null)
                .findFirst()
                .orElse(null);
    }

    private static String describe(Task t, Check c, Status status, String output) {
        return "Task " + UserText.quote(t.getName()) + ": check " + UserText.quote(c.getName()) + " is "
                + status.name().toLowerCase(Locale.ROOT)
                + (output == null || output.isEmpty() ? "" : ": " + UserText.cut(output, OUTPUT_LIMIT));
    }
}
