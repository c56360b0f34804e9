package dev.drover.controller.events;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.TaskEventType;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** When an allocation's Normal task events close into one Event, and what that Event says. */
class EventFoldsTest {

    static final long SECOND = Duration.ofSeconds(1).toNanos();
    static final Instant T0 = Instant.parse("2026-11-23T10:00:00Z");

    static Allocation owner(String uid) {
        Allocation a = new Allocation();
        a.setMetadata(new ObjectMetaBuilder()
                .withName(uid)
                .withNamespace("default")
                .withUid(uid)
                .build());
        return a;
    }

    static void start(EventFolds folds, String uid, String task, long tick) {
        for (TaskEventType t :
                new TaskEventType[] {TaskEventType.Received, TaskEventType.TaskSetup, TaskEventType.Started}) {
            assertThat(folds.add(uid, owner(uid), task, t, null, T0, tick)).isNull();
        }
    }

    @Test
    void tasksThatWentThroughTheSameTypesAreNamedTogether() {
        EventFolds folds = new EventFolds(10);
        start(folds, "a", "init", 0);
        start(folds, "a", "web", 0);
        EventFolds.Fold f = folds.close("a");
        assertThat(f.reason()).isEqualTo("Started");
        assertThat(f.message(EventRecorder.MESSAGE_LIMIT)).isEqualTo("Received, TaskSetup, Started: tasks init, web");
        assertThat(folds.open()).isZero();
    }

    @Test
    void tasksAreNamedInTheOrderTheirEventsHappenedNotAsTheyWereTold() {
        EventFolds folds = new EventFolds(10);
        // main was received first, but sidecar started first: each task's setup is told with its start
        folds.add("a", owner("a"), "sidecar", TaskEventType.Received, null, T0.plusNanos(2_000), 0);
        folds.add("a", owner("a"), "sidecar", TaskEventType.Started, null, T0.plusMillis(5), 0);
        folds.add("a", owner("a"), "main", TaskEventType.Received, null, T0.plusNanos(1_000), 0);
        folds.add("a", owner("a"), "main", TaskEventType.Started, null, T0.plusMillis(6), 0);

        EventFolds.Fold f = folds.close("a");

        assertThat(f.message(EventRecorder.MESSAGE_LIMIT)).isEqualTo("Received, Started: tasks main, sidecar");
    }

    @Test
    void anEventAloneInItsFoldKeepsItsOwnWords() {
        EventFolds folds = new EventFolds(10);
        folds.add("a", owner("a"), "web", TaskEventType.Exec, "exec \"sh\" by alice", T0, 0);

        EventFolds.Fold f = folds.close("a");

        assertThat(f.reason()).isEqualTo("Exec");
        assertThat(f.message(EventRecorder.MESSAGE_LIMIT)).isEqualTo("Task web: exec \"sh\" by alice");
    }

    @Test
    void tasksThatWentDifferentWaysHaveAClauseEachInTheOrderTheyHappened() {
        EventFolds folds = new EventFolds(10);
        folds.add("a", owner("a"), "web", TaskEventType.Killing, null, T0, 0);
        folds.add("a", owner("a"), "db", TaskEventType.Restarting, null, T0.plusSeconds(1), 0);
        folds.add("a", owner("a"), "web", TaskEventType.Killed, null, T0.plusSeconds(2), 0);
        EventFolds.Fold f = folds.close("a");
        assertThat(f.message(EventRecorder.MESSAGE_LIMIT)).isEqualTo("Killing, Killed: task web; Restarting: task db");
        assertThat(f.reason()).as("the newest").isEqualTo("Killed");
        assertThat(f.first).isEqualTo(T0);
        assertThat(f.last).isEqualTo(T0.plusSeconds(2));
    }

    @Test
    void aFoldClosesOnceItsAllocationWasQuietForASecond() {
        EventFolds folds = new EventFolds(10);
        start(folds, "a", "web", 0);
        start(folds, "b", "web", SECOND / 2);
        assertThat(folds.nextDeadline()).isEqualTo(SECOND);
        assertThat(folds.closeDue(SECOND - 1)).isEmpty();
        assertThat(folds.closeDue(SECOND))
                .extracting(f -> f.owner.getMetadata().getUid())
                .containsExactly("a");
        assertThat(folds.nextDeadline()).isEqualTo(SECOND + SECOND / 2);
        assertThat(folds.closeDue(SECOND + SECOND / 2)).hasSize(1);
        assertThat(folds.nextDeadline()).as("none open").isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void aFoldThatNeverFallsQuietClosesFiveSecondsAfterItOpened() {
        EventFolds folds = new EventFolds(10);
        long tick = 0;
        for (; tick < EventFolds.MAX_AGE.toNanos(); tick += SECOND / 2) {
            assertThat(folds.closeDue(tick)).isEmpty();
            folds.add("a", owner("a"), "web", TaskEventType.Restarting, null, T0, tick);
        }
        assertThat(folds.nextDeadline()).isEqualTo(EventFolds.MAX_AGE.toNanos());
        assertThat(folds.closeDue(tick))
                .singleElement()
                .satisfies(f -> assertThat(f.reason()).isEqualTo("Restarting"));
        folds.add("a", owner("a"), "web", TaskEventType.Started, null, T0, tick);
        assertThat(folds.open()).as("the next event opens a new one").isEqualTo(1);
    }

    @Test
    void aFoldNamesItsFirst32TaskEventsAndCountsTheRest() {
        EventFolds folds = new EventFolds(10);
        for (int i = 0; i < 1_000; i++) {
            folds.add("a", owner("a"), "task" + i, TaskEventType.Started, null, T0, 0);
        }
        folds.add("a", owner("a"), "last", TaskEventType.Killed, null, T0, 0);
        EventFolds.Fold f = folds.close("a");
        String message = f.message(EventRecorder.MESSAGE_LIMIT);
        assertThat(message).startsWith("Started: tasks task0, task1,").endsWith("; and 969 more task events");
        assertThat(message).doesNotContain("task32", "last");
        assertThat(f.reason()).as("the newest, though not named").isEqualTo("Killed");
    }

    @Test
    void pastItsLimitTheOldestFoldClosesToMakeRoom() {
        EventFolds folds = new EventFolds(2);
        start(folds, "a", "web", 0);
        start(folds, "b", "web", 1);
        start(folds, "a", "db", 2); // a's newest event is newer than b's, but a opened first
        EventFolds.Fold evicted = folds.add("c", owner("c"), "web", TaskEventType.Received, null, T0, 3);
        assertThat(evicted.owner.getMetadata().getUid()).isEqualTo("a");
        assertThat(folds.open()).isEqualTo(2);
    }

    @Test
    void aHugeOrHostileTaskNameIsCutAndEscapedAndTheMessageBounded() {
        EventFolds folds = new EventFolds(10);
        folds.add("a", owner("a"), "x".repeat(100_000), TaskEventType.Started, null, T0, 0);
        folds.add("a", owner("a"), "evil\u001b[31m", TaskEventType.Killed, null, T0, 0);
        assertThat(folds.close("a").message(EventRecorder.MESSAGE_LIMIT))
                .isEqualTo(
                        "Started: task " + "x".repeat(100) + "... (100000 characters); Killed: task evil\\u001b[31m");
        TaskEventType[] types = TaskEventType.values();
        for (int i = 0; i < EventFolds.ENTRIES; i++) { // each name cut at 100 characters, and still too long in all
            folds.add("a", owner("a"), i + "y".repeat(200), types[i % types.length], null, T0, 0);
        }
        assertThat(folds.close("a").message(EventRecorder.MESSAGE_LIMIT))
                .hasSizeLessThanOrEqualTo(EventRecorder.MESSAGE_LIMIT)
                .endsWith("characters)");
    }
}
