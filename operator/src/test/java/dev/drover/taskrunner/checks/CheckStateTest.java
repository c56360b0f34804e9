package dev.drover.taskrunner.checks;

import static dev.drover.api.v1alpha1.CheckStatus.Status.CRITICAL;
import static dev.drover.api.v1alpha1.CheckStatus.Status.PASSING;
import static dev.drover.api.v1alpha1.CheckStatus.Status.WARNING;
import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.api.v1alpha1.Check;
import dev.drover.api.v1alpha1.CheckStatus;
import dev.drover.api.v1alpha1.CheckStatus.Status;
import dev.drover.api.v1alpha1.CheckType;
import io.fabric8.kubernetes.api.model.IntOrString;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class CheckStateTest {

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

    final ManualClock clock = new ManualClock();

    static Check check(int successThreshold, int failureThreshold) {
        Check c = new Check("web", CheckType.HTTP);
        c.setPort(new IntOrString(8080));
        c.setSuccessThreshold(successThreshold);
        c.setFailureThreshold(failureThreshold);
        return c;
    }

    static ProbeResult result(char c) {
        return switch (c) {
            case 'P' -> ProbeResult.passing("200 OK");
            case 'W' -> ProbeResult.warning("429 Too Many Requests");
            default -> ProbeResult.critical("connection refused");
        };
    }

    /** Results as letters (P passing, W warning, C critical), and the status after each. */
    static Stream<Arguments> sequences() {
        return Stream.of(
                Arguments.of(1, 3, "P", List.of(PASSING)),
                Arguments.of(1, 3, "CCC", List.of(CRITICAL, CRITICAL, CRITICAL)),
                Arguments.of(1, 3, "PCCCP", List.of(PASSING, PASSING, PASSING, CRITICAL, PASSING)),
                Arguments.of(1, 3, "PCCPCC", List.of(PASSING, PASSING, PASSING, PASSING, PASSING, PASSING)),
                Arguments.of(1, 3, "PWWW", List.of(PASSING, PASSING, PASSING, WARNING)),
                Arguments.of(1, 3, "PWCWC", List.of(PASSING, PASSING, PASSING, WARNING, CRITICAL)),
                Arguments.of(1, 1, "PWCP", List.of(PASSING, WARNING, CRITICAL, PASSING)),
                Arguments.of(3, 1, "PPCPPP", List.of(CRITICAL, CRITICAL, CRITICAL, CRITICAL, CRITICAL, PASSING)),
                Arguments.of(2, 2, "PPCPC", List.of(CRITICAL, PASSING, PASSING, PASSING, PASSING)));
    }

    @ParameterizedTest(name = "success {0}, failure {1}: {2}")
    @MethodSource("sequences")
    void thresholdsCountResultsInARow(int success, int failure, String results, List<Status> expected) {
        CheckState state = new CheckState(check(success, failure), clock);
        List<Status> seen = new ArrayList<>();
        for (char c : results.toCharArray()) {
            clock.advance(Duration.ofSeconds(10));
            state.record(result(c));
            seen.add(state.status());
        }
        assertThat(seen).isEqualTo(expected);
    }

    @Test
    void aCheckIsCriticalUntilItsFirstPassingProbe() {
        CheckState state = new CheckState(check(1, 3), clock);
        assertThat(state.report())
                .isEqualTo(new CheckStatus("web", CRITICAL, "no probe has run yet", "2026-11-22T10:00:00Z"));
    }

    @Test
    void theFirstFailingProbeSaysWhyWithoutMovingSince() {
        CheckState state = new CheckState(check(1, 3), clock);
        clock.advance(Duration.ofSeconds(10));
        assertThat(state.record(ProbeResult.critical("connection refused"))).isTrue();
        assertThat(state.report())
                .isEqualTo(new CheckStatus("web", CRITICAL, "connection refused", "2026-11-22T10:00:00Z"));
        clock.advance(Duration.ofSeconds(10));
        assertThat(state.record(ProbeResult.critical("timed out"))).isFalse();
        assertThat(state.report().getOutput()).isEqualTo("connection refused");
    }

    @Test
    void outputAndSinceChangeOnlyWithTheStatus() {
        CheckState state = new CheckState(check(1, 1), clock);
        clock.advance(Duration.ofSeconds(10));
        assertThat(state.record(ProbeResult.passing("ok at 10:00:10"))).isTrue();
        clock.advance(Duration.ofSeconds(10));
        assertThat(state.record(ProbeResult.passing("ok at 10:00:20"))).isFalse();
        assertThat(state.report()).isEqualTo(new CheckStatus("web", PASSING, "ok at 10:00:10", "2026-11-22T10:00:10Z"));
        clock.advance(Duration.ofSeconds(10));
        assertThat(state.record(ProbeResult.critical("refused"))).isTrue();
        assertThat(state.report()).isEqualTo(new CheckStatus("web", CRITICAL, "refused", "2026-11-22T10:00:30Z"));
    }

    @Test
    void resultsBeforeTheInitialDelayAreIgnored() {
        Check c = check(1, 1);
        c.setInitialDelay("30s");
        CheckState state = new CheckState(c, clock);
        assertThat(state.firstProbeAt()).isEqualTo(Instant.parse("2026-11-22T10:00:30Z"));
        clock.advance(Duration.ofSeconds(29));
        assertThat(state.record(ProbeResult.passing("early"))).isFalse();
        assertThat(state.status()).isEqualTo(CRITICAL);
        clock.advance(Duration.ofSeconds(1));
        assertThat(state.record(ProbeResult.passing("on time"))).isTrue();
        assertThat(state.status()).isEqualTo(PASSING);
    }

    @Test
    void aHugeOutputIsCutForTheStatus() {
        CheckState state = new CheckState(check(1, 1), clock);
        clock.advance(Duration.ofSeconds(10));
        state.record(ProbeResult.critical("x".repeat(1_000_000)));
        assertThat(state.report().getOutput())
                .hasSizeLessThanOrEqualTo(CheckStatus.MAX_OUTPUT)
                .endsWith("(1000000 characters)");
    }

    @Test
    void aCheckWithoutASlotKeepsItsStatusMarkedStaleNeverAFreshPass() {
        CheckState s = new CheckState(check(1, 3), clock);
        s.record(ProbeResult.passing("HTTP 200: ok"));
        CheckStatus passing = s.report();
        clock.advance(Duration.ofSeconds(20));

        assertThat(s.markStale()).as("the report changes").isTrue();
        CheckStatus stale = s.report();
        assertThat(stale.getStatus()).as("its last status, kept").isEqualTo(PASSING);
        assertThat(stale.getOutput())
                .isEqualTo("stale: not probed since 2026-11-22T10:00:00Z, no probe slot was free; last said: HTTP 200:"
                        + " ok");
        assertThat(stale.getSince()).as("the status did not change").isEqualTo(passing.getSince());
        assertThat(s.stale()).isTrue();
        assertThat(s.markStale()).as("stale already: no new write").isFalse();

        assertThat(s.record(ProbeResult.passing("HTTP 200: fine")))
                .as("fresh again")
                .isTrue();
        assertThat(s.report().getOutput())
                .as("what set the status, as a check that keeps passing shows")
                .isEqualTo("HTTP 200: ok");
        assertThat(s.stale()).isFalse();
        assertThat(s.record(ProbeResult.passing("HTTP 200: still fine"))).isFalse();
    }

    @Test
    void aStaleChecksNextResultBelowItsThresholdShowsWhatSetItsStatus() {
        CheckState s = new CheckState(check(1, 3), clock);
        s.record(ProbeResult.passing("HTTP 200: ok"));
        s.markStale();
        assertThat(s.record(ProbeResult.critical("HTTP 503: down"))).isTrue();
        assertThat(s.report().getStatus()).isEqualTo(PASSING);
        assertThat(s.report().getOutput()).isEqualTo("HTTP 200: ok");
    }

    @Test
    void aCheckNeverProbedStaysCriticalWhenStaleAndItsFirstResultSaysWhy() {
        CheckState s = new CheckState(check(1, 3), clock);
        assertThat(s.markStale()).isTrue();
        assertThat(s.report().getStatus()).isEqualTo(CRITICAL);
        assertThat(s.report().getOutput()).isEqualTo("stale: no probe has run yet, no probe slot was free");
        assertThat(s.record(ProbeResult.critical("connection refused"))).isTrue();
        assertThat(s.report().getOutput()).isEqualTo("connection refused");

        CheckState resumed = CheckState.resumed(
                check(1, 3),
                clock,
                new CheckStatus("web", CRITICAL, "stale: no probe has run yet, no probe slot was free", "x"));
        assertThat(resumed.stale()).as("no result ever: it starts afresh").isFalse();
        assertThat(resumed.report().getOutput()).isEqualTo(CheckState.NOT_RUN);
    }

    @Test
    void aCheckResumedStaleStaysStaleUntilItsNextResult() {
        CheckState s = CheckState.resumed(
                check(1, 3),
                clock,
                new CheckStatus(
                        "web",
                        PASSING,
                        "stale: not probed since 2026-11-22T09:00:00Z, no probe slot was free; last said: HTTP 200: ok",
                        "2026-11-22T08:00:00Z"));
        assertThat(s.stale()).isTrue();
        assertThat(s.status()).isEqualTo(PASSING);
        assertThat(s.record(ProbeResult.critical("HTTP 503: down")))
                .as("below failureThreshold")
                .isTrue();
        assertThat(s.report().getOutput()).isEqualTo("HTTP 200: ok");
        assertThat(s.report().getSince()).isEqualTo("2026-11-22T08:00:00Z");
    }

    @Test
    void noStaleMarkBeforeTheFirstProbeIsDue() {
        Check c = check(1, 3);
        c.setInitialDelay("30s");
        CheckState s = new CheckState(c, clock);
        assertThat(s.markStale()).isFalse();
        assertThat(s.report().getOutput()).isEqualTo(CheckState.NOT_RUN);
    }
}
