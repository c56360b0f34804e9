package dev.drover.taskrunner.restarts;

import static dev.drover.taskrunner.restarts.RestartDecision.Kind.KILLED;
import static dev.drover.taskrunner.restarts.RestartDecision.Kind.NOT_RESTARTING;
import static dev.drover.taskrunner.restarts.RestartDecision.Kind.RESTART;
import static dev.drover.taskrunner.restarts.RestartDecision.Kind.TERMINATED;
import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.api.v1alpha1.AllocationType;
import dev.drover.api.v1alpha1.LifecycleHook;
import dev.drover.api.v1alpha1.RestartMode;
import dev.drover.api.v1alpha1.RestartPolicy;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.random.RandomGenerator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class RestartTrackerTest {

    /** A clock the test moves by hand. */
    static final class ManualClock implements InstantSource {
        Instant now = Instant.parse("2026-11-22T10:00:00Z");

        @Override
        public Instant instant() {
            return now;
        }

        void advance(Duration d) {
            now = now.plus(d);
        }
    }

    /** Jitter fixed at a fraction of its range: 0 gives the delay itself, just under 1 the top. */
    static RandomGenerator jitterAt(double fraction) {
        return new RandomGenerator() {
            @Override
            public long nextLong() {
                throw new UnsupportedOperationException();
            }

            @Override
            public long nextLong(long bound) {
                return Math.min(bound - 1, (long) (bound * fraction));
            }
        };
    }

    static final Outcome CLEAN = new Outcome.Exited(0, null, null);
    static final Outcome FAILED = new Outcome.Exited(1, null, null);
    static final RestartPolicy.Resolved SERVICE = RestartPolicy.SERVICE_DEFAULT;
    static final RestartPolicy.Resolved BATCH = RestartPolicy.BATCH_DEFAULT;

    final ManualClock clock = new ManualClock();

    RestartTracker tracker(RestartPolicy.Resolved policy, AllocationType type, LifecycleHook hook, boolean sidecar) {
        return new RestartTracker(policy, type, hook, sidecar, clock, jitterAt(0));
    }

    RestartTracker tracker(RestartPolicy.Resolved policy, AllocationType type) {
        return tracker(policy, type, null, false);
    }

    static RestartPolicy.Resolved policy(int attempts, String interval, String delay, RestartMode mode) {
        return new RestartPolicy.Resolved(
                attempts, dev.drover.common.Durations.parse(interval), dev.drover.common.Durations.parse(delay), mode);
    }

    /** Table: one outcome on a fresh tracker → the kind, whether failed, the reason. */
    static Stream<Arguments> firstDecisions() {
        return Stream.of(
                Arguments.of(
                        "service clean exit restarts",
                        SERVICE,
                        AllocationType.Service,
                        null,
                        false,
                        CLEAN,
                        RESTART,
                        false,
                        "Restart within policy"),
                Arguments.of(
                        "batch clean exit terminates",
                        BATCH,
                        AllocationType.Batch,
                        null,
                        false,
                        CLEAN,
                        TERMINATED,
                        false,
                        "Restart unnecessary as task terminated successfully"),
                Arguments.of(
                        "batch failure restarts",
                        BATCH,
                        AllocationType.Batch,
                        null,
                        false,
                        FAILED,
                        RESTART,
                        false,
                        "Restart within policy"),
                Arguments.of(
                        "batch exit 0 by signal is a failure",
                        BATCH,
                        AllocationType.Batch,
                        null,
                        false,
                        new Outcome.Exited(0, "SIGKILL", null),
                        RESTART,
                        false,
                        "Restart within policy"),
                Arguments.of(
                        "attempts 0: clean batch exit terminates",
                        policy(0, "1m", "1s", RestartMode.Fail),
                        AllocationType.Batch,
                        null,
                        false,
                        CLEAN,
                        TERMINATED,
                        false,
                        "Restart unnecessary as task terminated successfully"),
                Arguments.of(
                        "attempts 0: failure is not restarted",
                        policy(0, "1m", "1s", RestartMode.Fail),
                        AllocationType.Batch,
                        null,
                        false,
                        FAILED,
                        NOT_RESTARTING,
                        true,
                        "Policy allows no restarts"),
                Arguments.of(
                        "attempts 0: clean service exit is not restarted",
                        policy(0, "1m", "1s", RestartMode.Fail),
                        AllocationType.Service,
                        null,
                        false,
                        CLEAN,
                        NOT_RESTARTING,
                        true,
                        "Policy allows no restarts"),
                Arguments.of(
                        "recoverable start error restarts",
                        SERVICE,
                        AllocationType.Service,
                        null,
                        false,
                        new Outcome.StartFailed("busy", true),
                        RESTART,
                        false,
                        "Restart within policy"),
                Arguments.of(
                        "unrecoverable start error fails",
                        SERVICE,
                        AllocationType.Service,
                        null,
                        false,
                        new Outcome.StartFailed("no such file", false),
                        NOT_RESTARTING,
                        true,
                        "Error was unrecoverable"),
                Arguments.of(
                        "killed is never restarted",
                        SERVICE,
                        AllocationType.Service,
                        null,
                        false,
                        new Outcome.Killed(),
                        KILLED,
                        false,
                        "Task was killed"),
                Arguments.of(
                        "prestart clean exit terminates even in a service",
                        SERVICE,
                        AllocationType.Service,
                        LifecycleHook.Prestart,
                        false,
                        CLEAN,
                        TERMINATED,
                        false,
                        "Restart unnecessary as task terminated successfully"),
                Arguments.of(
                        "prestart sidecar clean exit restarts",
                        SERVICE,
                        AllocationType.Batch,
                        LifecycleHook.Prestart,
                        true,
                        CLEAN,
                        RESTART,
                        false,
                        "Restart within policy"),
                Arguments.of(
                        "poststart clean exit terminates",
                        SERVICE,
                        AllocationType.Service,
                        LifecycleHook.Poststart,
                        false,
                        CLEAN,
                        TERMINATED,
                        false,
                        "Restart unnecessary as task terminated successfully"),
                Arguments.of(
                        "poststart sidecar clean exit restarts",
                        SERVICE,
                        AllocationType.Batch,
                        LifecycleHook.Poststart,
                        true,
                        CLEAN,
                        RESTART,
                        false,
                        "Restart within policy"),
                Arguments.of(
                        "poststop never restarts on a clean exit",
                        SERVICE,
                        AllocationType.Service,
                        LifecycleHook.Poststop,
                        true,
                        CLEAN,
                        TERMINATED,
                        false,
                        "Restart unnecessary as task terminated successfully"),
                Arguments.of(
                        "poststop failure restarts under the policy",
                        SERVICE,
                        AllocationType.Service,
                        LifecycleHook.Poststop,
                        false,
                        FAILED,
                        RESTART,
                        false,
                        "Restart within policy"),
                Arguments.of(
                        "batch exit 0 with an error is a failure",
                        BATCH,
                        AllocationType.Batch,
                        null,
                        false,
                        new Outcome.Exited(0, null, "out of memory"),
                        RESTART,
                        false,
                        "Restart within policy"),
                Arguments.of(
                        "manual restart is immediate",
                        SERVICE,
                        AllocationType.Service,
                        null,
                        false,
                        new Outcome.RestartRequested(false),
                        RESTART,
                        false,
                        "Restart requested"),
                Arguments.of(
                        "restart requested for a failure counts under the policy",
                        SERVICE,
                        AllocationType.Service,
                        null,
                        false,
                        new Outcome.RestartRequested(true),
                        RESTART,
                        false,
                        "Restart within policy"),
                Arguments.of(
                        "attempts 0: manual restart still happens",
                        policy(0, "1m", "1s", RestartMode.Fail),
                        AllocationType.Service,
                        null,
                        false,
                        new Outcome.RestartRequested(false),
                        RESTART,
                        false,
                        "Restart requested"),
                Arguments.of(
                        "attempts 0: killed is still killed",
                        policy(0, "1m", "1s", RestartMode.Fail),
                        AllocationType.Service,
                        null,
                        false,
                        new Outcome.Killed(),
                        KILLED,
                        false,
                        "Task was killed"),
                Arguments.of(
                        "attempts 0: unrecoverable start error fails by policy",
                        policy(0, "1m", "1s", RestartMode.Fail),
                        AllocationType.Batch,
                        null,
                        false,
                        new Outcome.StartFailed("no such file", false),
                        NOT_RESTARTING,
                        true,
                        "Policy allows no restarts"),
                Arguments.of(
                        "killed batch task is not restarted",
                        BATCH,
                        AllocationType.Batch,
                        null,
                        false,
                        new Outcome.Killed(),
                        KILLED,
                        false,
                        "Task was killed"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("firstDecisions")
    void firstDecision(
            String name,
            RestartPolicy.Resolved policy,
            AllocationType type,
            LifecycleHook hook,
            boolean sidecar,
            Outcome outcome,
            RestartDecision.Kind kind,
            boolean failed,
            String reason) {
        RestartDecision d = tracker(policy, type, hook, sidecar).decide(outcome);
        assertThat(d.kind()).isEqualTo(kind);
        assertThat(d.failed()).isEqualTo(failed);
        assertThat(d.reason()).isEqualTo(reason);
        if (kind != RESTART || reason.equals("Restart requested")) {
            assertThat(d.delay()).isZero();
        } else {
            assertThat(d.delay()).isEqualTo(policy.delay()); // jitter source pinned at its minimum
        }
    }

    @Test
    void failModeGivesUpAfterTheAllowedAttempts() {
        RestartTracker t = tracker(SERVICE, AllocationType.Service);
        assertThat(t.decide(FAILED).kind()).isEqualTo(RESTART);
        assertThat(t.decide(FAILED).kind()).isEqualTo(RESTART);
        RestartDecision third = t.decide(FAILED);
        assertThat(third.kind()).isEqualTo(NOT_RESTARTING);
        assertThat(third.failed()).isTrue();
        assertThat(third.reason()).isEqualTo("Exceeded allowed attempts 2 in interval 30m and mode is \"Fail\"");
    }

    @Test
    void delayModeWaitsOutTheRestOfTheWindowWithoutJitter() {
        RestartTracker t = new RestartTracker(
                policy(1, "10s", "1s", RestartMode.Delay), AllocationType.Service, null, false, clock, jitterAt(0.99));
        assertThat(t.decide(FAILED).kind()).isEqualTo(RESTART);
        clock.advance(Duration.ofSeconds(3));
        RestartDecision d = t.decide(FAILED);
        assertThat(d.kind()).isEqualTo(RESTART);
        assertThat(d.failed()).isFalse();
        assertThat(d.delay()).isEqualTo(Duration.ofSeconds(7));
        assertThat(d.reason()).isEqualTo("Exceeded allowed attempts, applying a delay");
        clock.advance(Duration.ofSeconds(7));
        assertThat(t.decide(FAILED).reason()).as("a new window has begun").isEqualTo("Restart within policy");
    }

    @Test
    void jitterStaysWithinDelayAndAQuarterMore() {
        Duration delay = Duration.ofSeconds(15);
        RestartDecision low =
                new RestartTracker(SERVICE, AllocationType.Service, null, false, clock, jitterAt(0)).decide(FAILED);
        RestartDecision high = new RestartTracker(
                        SERVICE, AllocationType.Service, null, false, clock, jitterAt(0.999999))
                .decide(FAILED);
        assertThat(low.delay()).isEqualTo(delay);
        assertThat(high.delay()).isGreaterThan(Duration.ofMillis(18_700)).isLessThan(Duration.ofMillis(18_750));
        var real = new RestartTracker(
                SERVICE, AllocationType.Service, null, false, clock, new java.util.SplittableRandom(7));
        for (int i = 0; i < 2; i++) {
            assertThat(real.decide(FAILED).delay())
                    .isBetween(delay, Duration.ofMillis(18_750).minusNanos(1));
        }
    }

    @Test
    void zeroDelayIsOneNanosecondNotACrash() {
        RestartDecision d = tracker(policy(3, "1m", "0s", RestartMode.Fail), AllocationType.Service)
                .decide(FAILED);
        assertThat(d.kind()).isEqualTo(RESTART);
        assertThat(d.delay()).isEqualTo(Duration.ofNanos(1));
    }

    @Test
    void manualRestartIsImmediateAndDoesNotCount() {
        RestartTracker t = tracker(SERVICE, AllocationType.Service);
        t.decide(FAILED);
        RestartDecision d = t.decide(new Outcome.RestartRequested(false));
        assertThat(d.kind()).isEqualTo(RESTART);
        assertThat(d.delay()).isZero();
        assertThat(d.reason()).isEqualTo("Restart requested");
        assertThat(t.count()).isEqualTo(1);
    }

    @Test
    void restartRequestedForAFailureCounts() {
        RestartTracker t = tracker(policy(1, "1m", "1s", RestartMode.Fail), AllocationType.Service);
        assertThat(t.decide(new Outcome.RestartRequested(true)).kind()).isEqualTo(RESTART);
        assertThat(t.decide(new Outcome.RestartRequested(true)).kind()).isEqualTo(NOT_RESTARTING);
    }

    @Test
    void windowResetCountsFromOneSoNoExtraRestartPerWindow() {
        RestartTracker t = tracker(policy(2, "10s", "1s", RestartMode.Fail), AllocationType.Service);
        assertThat(t.decide(FAILED).kind()).isEqualTo(RESTART);
        clock.advance(Duration.ofSeconds(1));
        assertThat(t.decide(FAILED).kind()).isEqualTo(RESTART);
        clock.advance(Duration.ofSeconds(10)); // the window has passed: the next failure is the first of a new one
        assertThat(t.decide(FAILED).kind()).isEqualTo(RESTART);
        assertThat(t.count()).isEqualTo(1);
        clock.advance(Duration.ofSeconds(1));
        assertThat(t.decide(FAILED).kind()).isEqualTo(RESTART);
        clock.advance(Duration.ofSeconds(1));
        assertThat(t.decide(FAILED).kind()).as("2 attempts per window, not 3").isEqualTo(NOT_RESTARTING);
    }

    @Test
    void windowStartsWhenTheTrackerIsCreated() {
        RestartTracker t = tracker(policy(1, "10s", "1s", RestartMode.Fail), AllocationType.Service);
        clock.advance(Duration.ofSeconds(9));
        assertThat(t.decide(FAILED).kind()).isEqualTo(RESTART);
        clock.advance(Duration.ofSeconds(1)); // 10 s after creation: a new window
        assertThat(t.decide(FAILED).kind()).isEqualTo(RESTART);
    }
}
