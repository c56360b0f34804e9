package dev.drover.taskrunner.checks;

import static dev.drover.api.v1alpha1.CheckStatus.Status.CRITICAL;
import static dev.drover.api.v1alpha1.CheckStatus.Status.PASSING;
import static dev.drover.api.v1alpha1.CheckStatus.Status.WARNING;
import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.api.v1alpha1.CheckRestart;
import dev.drover.api.v1alpha1.CheckStatus.Status;
import java.time.Duration;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class CheckRestartTrackerTest {

    final CheckStateTest.ManualClock clock = new CheckStateTest.ManualClock();

    static Status status(char c) {
        return switch (c) {
            case 'P' -> PASSING;
            case 'W' -> WARNING;
            default -> CRITICAL;
        };
    }

    /**
     * Statuses of one check, 10 s apart from the task's start, and the index of the one that decides a restart (-1:
     * none).
     */
    static Stream<Arguments> table() {
        return Stream.of(
                Arguments.of(3, "1s", false, "CCC", 2),
                Arguments.of(1, "1s", false, "PC", 1),
                Arguments.of(3, "1s", false, "CCPCCPCC", -1),
                Arguments.of(3, "1s", false, "CCPCCC", 5),
                Arguments.of(2, "1s", false, "WC", 1),
                Arguments.of(2, "1s", true, "WWWW", -1),
                Arguments.of(2, "1s", true, "CWC", -1),
                Arguments.of(2, "1s", true, "CCW", 1),
                Arguments.of(0, "1s", false, "CCCCCCCCCC", -1),
                // grace 25s: the statuses at 10 s and 20 s are not counted
                Arguments.of(2, "25s", false, "CCCC", 3),
                Arguments.of(1, "25s", false, "CCC", 2));
    }

    @ParameterizedTest(name = "limit {0}, grace {1}, ignoreWarnings {2}: {3}")
    @MethodSource("table")
    void restartsAfterLimitUnhealthyStatusesInARowPastTheGrace(
            int limit, String grace, boolean ignoreWarnings, String statuses, int restartAt) {
        CheckRestartTracker tracker =
                new CheckRestartTracker(CheckRestart.resolve(new CheckRestart(limit, grace, ignoreWarnings)), clock);
        tracker.taskStarted();
        int decided = -1;
        for (int i = 0; i < statuses.length(); i++) {
            clock.advance(Duration.ofSeconds(10));
            if (tracker.observe("web", status(statuses.charAt(i))).isPresent() && decided < 0) {
                decided = i;
            }
        }
        assertThat(decided).isEqualTo(restartAt);
    }

    @Test
    void theReasonNamesTheCheckAndHowOftenItFailed() {
        CheckRestartTracker tracker =
                new CheckRestartTracker(CheckRestart.resolve(new CheckRestart(2, "0s", false)), clock);
        tracker.taskStarted();
        assertThat(tracker.observe("db", CRITICAL)).isEmpty();
        assertThat(tracker.observe("db", WARNING))
                .contains("check \"db\" was warning 2 times in a row (checkRestart limit 2)");
    }

    @Test
    void eachCheckCountsOnItsOwn() {
        CheckRestartTracker tracker =
                new CheckRestartTracker(CheckRestart.resolve(new CheckRestart(2, "0s", false)), clock);
        tracker.taskStarted();
        assertThat(tracker.observe("web", CRITICAL)).isEmpty();
        assertThat(tracker.observe("db", CRITICAL)).isEmpty();
        assertThat(tracker.observe("web", PASSING)).isEmpty();
        assertThat(tracker.observe("db", CRITICAL))
                .hasValueSatisfying(r -> assertThat(r).contains("\"db\""));
    }

    @Test
    void oneRestartIsDecidedUntilTheTaskStartsAgainWithANewGrace() {
        CheckRestartTracker tracker =
                new CheckRestartTracker(CheckRestart.resolve(new CheckRestart(1, "30s", false)), clock);
        tracker.taskStarted();
        clock.advance(Duration.ofSeconds(30));
        assertThat(tracker.observe("web", CRITICAL)).isPresent();
        assertThat(tracker.observe("web", CRITICAL)).as("already restarting").isEmpty();

        tracker.taskStarted();
        clock.advance(Duration.ofSeconds(29));
        assertThat(tracker.observe("web", CRITICAL)).as("inside the new grace").isEmpty();
        clock.advance(Duration.ofSeconds(1));
        assertThat(tracker.observe("web", CRITICAL)).isPresent();
    }

    @Test
    void nothingCountsBeforeTheTaskStarts() {
        CheckRestartTracker tracker =
                new CheckRestartTracker(CheckRestart.resolve(new CheckRestart(1, "0s", false)), clock);
        assertThat(tracker.observe("web", CRITICAL)).isEqualTo(Optional.empty());
    }

    @Test
    void noCheckRestartNeverRestarts() {
        CheckRestartTracker tracker = new CheckRestartTracker(CheckRestart.resolve(null), clock);
        tracker.taskStarted();
        for (int i = 0; i < 100; i++) {
            clock.advance(Duration.ofSeconds(10));
            assertThat(tracker.observe("web", CRITICAL)).isEmpty();
        }
    }
}
