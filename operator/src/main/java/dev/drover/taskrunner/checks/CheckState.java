package dev.drover.taskrunner.checks;

import dev.drover.api.Timestamps;
import dev.drover.api.v1alpha1.Check;
import dev.drover.api.v1alpha1.CheckStatus;
import dev.drover.api.v1alpha1.CheckStatus.Status;
import dev.drover.common.UserText;
import java.time.Instant;
import java.time.InstantSource;

/**
 * The status of one check of one run of a task, from its probes' results; no I/O. It starts critical ("no probe has
 * run yet"), as a Kubernetes readiness probe starts not ready, so a task is not healthy before its first passing probe.
 * The status turns passing after {@code successThreshold} passing results in a row, and warning or critical (the
 * latest result's) after {@code failureThreshold} failing ones in a row. Results earlier than {@code initialDelay}
 * after the task started are ignored.
 *
 * <p>{@code output} and {@code since} change only with the status (and the first critical probe replaces the initial
 * output), so a check whose output varies from probe to probe
 * does not rewrite the allocation's status at every probe.
 */
public final class CheckState {

    static final String NOT_RUN = "no probe has run yet";

    private final Check check;
    private final InstantSource clock;
    private final Instant firstProbeAt;
    private Status status = Status.CRITICAL;
    private String output = NOT_RUN;
    private Instant since;
    private int successes;
    private int failures;

    /** A check of a task that started now (per {@code clock}). */
    public CheckState(Check check, InstantSource clock) {
        this.check = check;
        this.clock = clock;
        this.since = clock.instant();
        this.firstProbeAt = since.plus(check.effectiveInitialDelay());
    }

    /**
     * A check of a task whose process the agent reattached to (after its own restart): it goes on from what the task's
     * state reported before, so a process that never stopped does not turn unhealthy, and its allocation not
     * un-Ready, while its checks are probed again. A report without a status, or one saying no probe has run, is no
     * result: the check starts afresh.
     */
    public static CheckState resumed(Check check, InstantSource clock, CheckStatus reported) {
        CheckState s = new CheckState(check, clock);
        if (reported == null || reported.getStatus() == null || NOT_RUN.equals(reported.getOutput())) {
            return s;
        }
        s.status = reported.getStatus();
        s.output = reported.getOutput() == null ? "" : UserText.cut(reported.getOutput(), CheckStatus.MAX_OUTPUT);
        try {
            s.since = reported.getSince() == null ? s.since : Timestamps.parse(reported.getSince());
        } catch (RuntimeException unreadable) {
            // the state store holds what the agent wrote; an unreadable time is taken as now
        }
        return s;
    }

    /** When the first probe is due: {@code initialDelay} after the task started. */
    public Instant firstProbeAt() {
        return firstProbeAt;
    }

    /**
     * Takes one probe's result, now. Returns whether the status changed (and so what the status report shows); a
     * result before {@link #firstProbeAt()} changes nothing.
     */
    public boolean record(ProbeResult result) {
        Instant now = clock.instant();
        if (now.isBefore(firstProbeAt)) {
            return false;
        }
        Status next;
        if (result.status() == Status.PASSING) {
            successes++;
            failures = 0;
            next = successes >= check.effectiveSuccessThreshold() ? Status.PASSING : status;
        } else {
            failures++;
            successes = 0;
            next = failures >= check.effectiveFailureThreshold() ? result.status() : status;
        }
        if (next == status) {
            // The first probe that agrees with the initial status still says why, in place of "not run yet".
            if (output != NOT_RUN || result.status() != status) {
                return false;
            }
            output = UserText.cut(result.output(), CheckStatus.MAX_OUTPUT);
            return true;
        }
        status = next;
        output = UserText.cut(result.output(), CheckStatus.MAX_OUTPUT);
        since = now;
        return true;
    }

    public String name() {
        return check.getName();
    }

    public Status status() {
        return status;
    }

    /** The entry of {@code taskStates[].checks}. */
    public CheckStatus report() {
        return new CheckStatus(check.getName(), status, output, Timestamps.format(since));
    }
}
