package dev.drover.taskrunner.checks;

import dev.drover.api.v1alpha1.CheckRestart;
import dev.drover.api.v1alpha1.CheckStatus.Status;
import dev.drover.common.UserText;
import java.time.Instant;
import java.time.InstantSource;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Whether failing checks restart their task, as Nomad's {@code check_restart}; no I/O. Each check's status after each
 * probe is counted: {@code limit} unhealthy ones in a row of one check, all later than {@code grace} after the task
 * (re)started, decide a restart. A healthy one (passing, or warning with {@code ignoreWarnings}) starts that check's
 * count again, so a flapping check does not restart its task. Results inside the grace are not counted, as Nomad does
 * not count them. Once a restart is decided nothing more is counted until {@link #taskStarted()}: the task runner
 * restarts through the restart policy, which may instead give up.
 */
public final class CheckRestartTracker {

    private final CheckRestart.Resolved policy;
    private final InstantSource clock;
    private final Map<String, Integer> unhealthy = new HashMap<>();
    private Instant graceUntil;
    private boolean restarting;

    public CheckRestartTracker(CheckRestart.Resolved policy, InstantSource clock) {
        this.policy = policy;
        this.clock = clock;
    }

    /** The task has (re)started now: counts start again after a new grace. */
    public void taskStarted() {
        graceUntil = clock.instant().plus(policy.grace());
        unhealthy.clear();
        restarting = false;
    }

    /**
     * Counts one status of {@code check}, now. Returns why the task must restart (it leads the task's {@code
     * Restarting} or {@code NotRestarting} event) when it must; empty otherwise, always when {@code limit} is 0 or the task has not started.
     */
    public Optional<String> observe(String check, Status status) {
        if (!policy.enabled() || graceUntil == null || restarting) {
            return Optional.empty();
        }
        if (status == Status.PASSING || (status == Status.WARNING && policy.ignoreWarnings())) {
            unhealthy.remove(check);
            return Optional.empty();
        }
        if (clock.instant().isBefore(graceUntil)) {
            return Optional.empty();
        }
        int count = unhealthy.merge(check, 1, Integer::sum);
        if (count < policy.limit()) {
            return Optional.empty();
        }
        restarting = true;
        return Optional.of("check " + UserText.quote(check) + " was "
                + status.name().toLowerCase() + " "
                + (count == 1 ? "once" : count + " times in a row") + " (checkRestart limit "
                + policy.limit() + ")");
    }
}
