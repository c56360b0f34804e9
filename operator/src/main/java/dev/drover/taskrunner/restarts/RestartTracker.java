package dev.drover.taskrunner.restarts;

import dev.drover.api.v1alpha1.AllocationType;
import dev.drover.api.v1alpha1.LifecycleHook;
import dev.drover.api.v1alpha1.RestartMode;
import dev.drover.api.v1alpha1.RestartPolicy;
import dev.drover.common.Durations;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Objects;
import java.util.random.RandomGenerator;

/**
 * Decides, after each exit or start failure, whether a task starts again and
 * after how long. A pure decision object: no I/O, no waiting; time and jitter
 * come from the sources it is given. The rules, in order, are those of
 * docs/semantics.md, Restarts.
 */
public final class RestartTracker {

    static final String REASON_WITHIN_POLICY = "Restart within policy";
    static final String REASON_NO_RESTARTS = "Policy allows no restarts";
    static final String REASON_UNRECOVERABLE = "Error was unrecoverable";
    static final String REASON_DELAY = "Exceeded allowed attempts, applying a delay";
    static final String REASON_SUCCESS = "Restart unnecessary as task terminated successfully";
    static final String REASON_REQUESTED = "Restart requested";
    static final String REASON_KILLED = "Task was killed";

    private static final Duration MIN_DELAY = Duration.ofNanos(1);

    private RestartPolicy.Resolved policy;
    private boolean restartOnCleanExit;
    private final InstantSource clock;
    private final RandomGenerator random;
    private Instant windowStart;
    private int count;

    /**
     * @param hook    the task's lifecycle hook, null for a main task
     * @param sidecar whether a lifecycle task keeps running beside the main tasks
     */
    public RestartTracker(
            RestartPolicy.Resolved policy,
            AllocationType type,
            LifecycleHook hook,
            boolean sidecar,
            InstantSource clock,
            RandomGenerator random) {
        this.policy = Objects.requireNonNull(policy, "policy");
        this.restartOnCleanExit = restartsOnCleanExit(type, hook, sidecar);
        this.clock = clock;
        this.random = random;
        this.windowStart = clock.instant();
    }

    /**
     * Whether a task that exits 0 runs again: services yes, batch no; a prestart or
     * poststart task only if it is a sidecar; a poststop task never.
     */
    static boolean restartsOnCleanExit(AllocationType type, LifecycleHook hook, boolean sidecar) {
        if (hook == null) {
            return type == AllocationType.Service;
        }
        return switch (hook) {
            case Prestart, Poststart -> sidecar;
            case Poststop -> false;
        };
    }

    /**
     * Applies an updated task definition's policy and lifecycle; the current
     * window and count carry on, as restarts already made still count.
     */
    public void update(RestartPolicy.Resolved newPolicy, AllocationType type, LifecycleHook hook, boolean sidecar) {
        this.policy = Objects.requireNonNull(newPolicy, "policy");
        this.restartOnCleanExit = restartsOnCleanExit(type, hook, sidecar);
    }

    /** Restarts counted in the current interval window. */
    public int count() {
        return count;
    }

    public RestartDecision decide(Outcome outcome) {
        if (outcome instanceof Outcome.Killed) {
            return new RestartDecision(RestartDecision.Kind.KILLED, Duration.ZERO, REASON_KILLED, false);
        }
        if (outcome instanceof Outcome.RestartRequested r && !r.failure()) {
            return new RestartDecision(RestartDecision.Kind.RESTART, Duration.ZERO, REASON_REQUESTED, false);
        }
        boolean cleanAndDone = outcome instanceof Outcome.Exited e && e.clean() && !restartOnCleanExit;
        if (policy.attempts() == 0) {
            return cleanAndDone ? terminated() : notRestarting(REASON_NO_RESTARTS);
        }
        Instant now = clock.instant();
        if (!now.isBefore(windowStart.plus(policy.interval()))) {
            windowStart = now;
            count = 0;
        }
        count++; // after the reset: counting from 1 in a new window, never one extra
        if (outcome instanceof Outcome.StartFailed s && !s.recoverable()) {
            return notRestarting(REASON_UNRECOVERABLE);
        }
        if (cleanAndDone) {
            return terminated();
        }
        if (count > policy.attempts()) {
            if (policy.mode() == RestartMode.Fail) {
                return notRestarting("Exceeded allowed attempts " + policy.attempts() + " in interval "
                        + Durations.format(policy.interval()) + " and mode is \"" + policy.mode() + "\"");
            }
            Duration rest = Duration.between(now, windowStart.plus(policy.interval()));
            return new RestartDecision(RestartDecision.Kind.RESTART, atLeastOneNano(rest), REASON_DELAY, false);
        }
        return new RestartDecision(RestartDecision.Kind.RESTART, jittered(policy.delay()), REASON_WITHIN_POLICY, false);
    }

    /** {@code delay} stretched by up to a quarter: uniformly in [delay, 1.25 × delay). */
    private Duration jittered(Duration delay) {
        long nanos = delay.toNanos();
        if (nanos <= 0) {
            return MIN_DELAY;
        }
        long extra = nanos / 4 == 0 ? 0 : random.nextLong(nanos / 4);
        return Duration.ofNanos(nanos + extra);
    }

    private static Duration atLeastOneNano(Duration d) {
        return d.compareTo(MIN_DELAY) < 0 ? MIN_DELAY : d;
    }

    private static RestartDecision terminated() {
        return new RestartDecision(RestartDecision.Kind.TERMINATED, Duration.ZERO, REASON_SUCCESS, false);
    }

    private static RestartDecision notRestarting(String reason) {
        return new RestartDecision(RestartDecision.Kind.NOT_RESTARTING, Duration.ZERO, reason, true);
    }
}
