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
 *
 * <p>A check whose probe could not run for lack of a probe slot is stale: it keeps its status (a passing check
 * stays passing, one never probed stays critical), and its output says it is stale ({@value #STALE}...), until its
 * next result, which shows the output it would have shown had it not been stale.
 */
public final class CheckState {

    static final String NOT_RUN = "no probe has run yet";
    /** How the output of a stale check begins. */
    static final String STALE = "stale: ";
    /** Between a stale check's reason and what its status was set by. */
    private static final String STALE_LAST = "; last said: ";

    private final Check check;
    private final InstantSource clock;
    private final Instant firstProbeAt;
    private Status status = Status.CRITICAL;
    private String output = NOT_RUN;
    /** While stale: the output it shows when fresh again, if its next result does not replace it. */
    private String freshOutput;

    private Instant since;
    private Instant lastResult;
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
     * un-Ready, while its checks are probed again. A report without a status, or one saying no probe has run (stale
     * or not), is no result: the check starts afresh. A stale one stays stale until its next result.
     */
    public static CheckState resumed(Check check, InstantSource clock, CheckStatus reported) {
        CheckState s = new CheckState(check, clock);
        if (reported == null
                || reported.getStatus() == null
                || NOT_RUN.equals(reported.getOutput())
                || String.valueOf(reported.getOutput()).startsWith(STALE + NOT_RUN)) {
            return s;
        }
        s.status = reported.getStatus();
        s.output = reported.getOutput() == null ? "" : UserText.cut(reported.getOutput(), CheckStatus.MAX_OUTPUT);
        if (s.output.startsWith(STALE)) { // stale still: the next result says more
            int last = s.output.indexOf(STALE_LAST);
            s.freshOutput = last < 0 ? "" : s.output.substring(last + STALE_LAST.length());
        }
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
        lastResult = now;
        boolean wasStale = freshOutput != null;
        if (wasStale) {
            output = freshOutput;
            freshOutput = null;
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
                return wasStale;
            }
            output = UserText.cut(result.output(), CheckStatus.MAX_OUTPUT);
            return true;
        }
        status = next;
        output = UserText.cut(result.output(), CheckStatus.MAX_OUTPUT);
        since = now;
        return true;
    }

    /**
     * The check's probe was due, now, but could not run for lack of a probe slot: its status stays, and its output
     * says it is stale and what set the status. Returns whether that changed what the status report shows: not when
     * it was stale already or its first probe is not due yet.
     */
    public boolean markStale() {
        if (freshOutput != null || clock.instant().isBefore(firstProbeAt)) {
            return false;
        }
        freshOutput = output;
        String stale;
        if (output == NOT_RUN) {
            stale = STALE + NOT_RUN + ", no probe slot was free";
        } else {
            stale = STALE + (lastResult == null ? "" : "not probed since " + Timestamps.format(lastResult) + ", ")
                    + "no probe slot was free" + (output.isEmpty() ? "" : STALE_LAST + output);
        }
        output = UserText.cut(stale, CheckStatus.MAX_OUTPUT);
        return true;
    }

    /** Whether the check is stale: its latest probe could not run, and no result came since. */
    public boolean stale() {
        return freshOutput != null;
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
