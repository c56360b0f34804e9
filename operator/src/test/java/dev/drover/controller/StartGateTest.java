package dev.drover.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.drover.state.AllocId;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** Allocations are taken on a few at a time, in the order they came; slots free up as they run, or in time. */
class StartGateTest {

    static AllocId id(String name) {
        return new AllocId("default", name);
    }

    @Test
    void theFirstOnesStartAtOnceTheRestInOrderAsSlotsFree() {
        List<String> started = new CopyOnWriteArrayList<>();
        try (StartGate gate = new StartGate(2, Duration.ofMinutes(1))) {
            assertThat(gate.admitOrQueue(id("a"), () -> started.add("a")))
                    .as("the caller starts it")
                    .isTrue();
            assertThat(gate.admitOrQueue(id("b"), () -> started.add("b"))).isTrue();
            for (String n : List.of("c", "d", "e")) {
                assertThat(gate.admitOrQueue(id(n), () -> started.add(n))).isFalse();
            }
            assertThat(gate.admitOrQueue(id("c"), () -> started.add("c again")))
                    .as("queued once")
                    .isFalse();
            assertThat(gate.waiting()).isEqualTo(3);
            gate.release(id("a"));
            await().atMost(Duration.ofSeconds(2)).until(() -> started.size() == 1);
            gate.cancel(id("d")); // deleted while it waited
            gate.release(id("b"));
            gate.release(id("c"));
            await().atMost(Duration.ofSeconds(2)).until(() -> started.size() == 2);
            assertThat(started).containsExactly("c", "e");
            assertThat(gate.waiting()).isZero();
        }
    }

    @Test
    void aSlotHeldPastTheHoldTimeGoesToTheNextOne() {
        List<String> started = new CopyOnWriteArrayList<>();
        try (StartGate gate = new StartGate(1, Duration.ofMillis(200))) {
            assertThat(gate.admitOrQueue(id("waits-on-its-previous"), () -> {})).isTrue();
            assertThat(gate.admitOrQueue(id("next"), () -> started.add("next"))).isFalse();
            long begin = System.nanoTime();
            await().atMost(Duration.ofSeconds(2)).until(() -> !started.isEmpty());
            assertThat(Duration.ofNanos(System.nanoTime() - begin)).isGreaterThanOrEqualTo(Duration.ofMillis(150));
        }
    }

    @Test
    void theLongestWaitIsTheFirstWaitingOnesAndNoneWhenNoneWaits() {
        try (StartGate gate = new StartGate(1, Duration.ofMinutes(1))) {
            gate.admitOrQueue(id("a"), () -> {});
            assertThat(gate.longestWait()).as("a is taken on").isZero();
            long begin = System.nanoTime();
            gate.admitOrQueue(id("b"), () -> {});
            await().atMost(Duration.ofSeconds(2)).until(() -> gate.longestWait().toMillis() >= 100);
            gate.admitOrQueue(id("c"), () -> {});
            assertThat(gate.longestWait())
                    .as("b's wait, not c's")
                    .isGreaterThanOrEqualTo(Duration.ofMillis(100))
                    .isLessThanOrEqualTo(Duration.ofNanos(System.nanoTime() - begin));
            gate.release(id("a"));
            gate.release(id("b"));
            gate.release(id("c"));
            assertThat(gate.longestWait()).isZero();
        }
    }

    @Test
    void withoutABoundEveryOneIsTakenOnAtOnce() {
        try (StartGate gate = new StartGate(0, Duration.ofSeconds(1))) {
            for (int i = 0; i < 100; i++) {
                assertThat(gate.admitOrQueue(id("a" + i), () -> {})).isTrue();
            }
            assertThat(gate.waiting()).isZero();
        }
    }

    @Test
    void closeDropsWhatWaitsAndStartsNothingMore() {
        List<String> started = new CopyOnWriteArrayList<>();
        StartGate gate = new StartGate(1, Duration.ofMillis(50));
        gate.admitOrQueue(id("a"), () -> {});
        gate.admitOrQueue(id("b"), () -> started.add("b"));
        gate.close();
        assertThat(gate.waiting()).isZero();
        gate.release(id("a"));
        assertThat(gate.admitOrQueue(id("c"), () -> started.add("c"))).isFalse();
        assertThat(started).isEmpty();
    }
}
