package dev.drover.taskrunner.checks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ProbeSlotsTest {

    final List<Thread> threads = new ArrayList<>();
    /** The allocations whose probes got a slot, in the order they got it. */
    final Queue<String> granted = new ConcurrentLinkedQueue<>();

    @AfterEach
    void stopThreads() throws InterruptedException {
        for (Thread t : threads) {
            t.interrupt();
            assertThat(t.join(Duration.ofSeconds(10)))
                    .as("a waiting probe's thread ends")
                    .isTrue();
        }
    }

    /** A probe of {@code allocation} asking for a slot on a thread of its own, which keeps it once given. */
    Thread ask(ProbeSlots slots, String allocation) {
        Thread t = Thread.ofVirtual().name("probe-" + allocation).start(() -> {
            if (slots.take(allocation)) {
                granted.add(allocation);
            }
        });
        threads.add(t);
        return t;
    }

    void awaitWaiting(ProbeSlots slots, int n) {
        await().atMost(Duration.ofSeconds(10)).until(() -> slots.waiting() == n);
    }

    @ParameterizedTest(name = "{0} slots, {1} allocations: at most {2} each")
    @CsvSource({
        "64, 1, 32", // one allocation alone: the other half is kept for the next to come
        "64, 2, 21",
        "64, 3, 16",
        "64, 31, 2",
        "64, 32, 1",
        "64, 63, 1",
        "64, 64, 1", // as many allocations as slots: one each, none kept back
        "64, 1000, 1", // more: one each still; a freed slot goes to the longest waiting
        "1, 1, 1",
        "2, 1, 1",
        "8, 1, 4",
        "8, 3, 2"
    })
    void anAllocationsShareIsTheSlotsOverOneMoreThanTheAllocationsAndAtLeastOne(int slots, int allocations, int share) {
        assertThat(ProbeSlots.share(slots, allocations)).isEqualTo(share);
    }

    @Test
    void anAllocationAtItsShareWaitsWhileAnotherGetsAFreeSlot() {
        ProbeSlots slots = new ProbeSlots(4); // two allocations: at most 1 each, as 4 / 3 is 1
        slots.join("a");
        slots.join("b");
        for (int i = 0; i < 3; i++) {
            ask(slots, "a");
        }
        awaitWaiting(slots, 2);
        assertThat(slots.heldBy("a")).isEqualTo(1);
        ask(slots, "b");
        await().atMost(Duration.ofSeconds(10)).until(() -> slots.heldBy("b") == 1);
        assertThat(slots.running())
                .as("two slots stay free for a third allocation")
                .isEqualTo(2);
        assertThat(slots.waiting()).as("a's others wait, though slots are free").isEqualTo(2);

        slots.release("a"); // a's probe ended: its next waiting one takes its place, in order
        await().atMost(Duration.ofSeconds(10)).until(() -> slots.waiting() == 1);
        assertThat(slots.heldBy("a")).isEqualTo(1);
        assertThat(granted).containsExactly("a", "b", "a");
    }

    @Test
    void aFreedSlotGoesToTheLongestWaitingProbeUnderItsShare() {
        ProbeSlots slots = new ProbeSlots(2); // three allocations: one each, two at a time
        slots.join("a");
        slots.join("b");
        slots.join("c");
        ask(slots, "a");
        ask(slots, "a");
        awaitWaiting(slots, 1);
        ask(slots, "b");
        await().atMost(Duration.ofSeconds(10)).until(() -> slots.running() == 2);
        ask(slots, "c");
        awaitWaiting(slots, 2); // a's second (first in line, but a holds its one) and c
        slots.release("b");
        await().atMost(Duration.ofSeconds(10)).until(() -> slots.heldBy("c") == 1);
        assertThat(slots.heldBy("a")).as("passed over: at its share").isEqualTo(1);
        slots.release("a");
        await().atMost(Duration.ofSeconds(10)).until(() -> slots.waiting() == 0);
        assertThat(granted).containsExactly("a", "b", "c", "a");
    }

    @Test
    void anAllocationThatLeavesGrowsTheOthersShare() {
        ProbeSlots slots = new ProbeSlots(6); // two allocations: 2 each
        slots.join("a");
        slots.join("b");
        for (int i = 0; i < 4; i++) {
            ask(slots, "a");
        }
        awaitWaiting(slots, 2);
        slots.leave("b"); // a alone: 3
        await().atMost(Duration.ofSeconds(10)).until(() -> slots.heldBy("a") == 3);
        assertThat(slots.waiting()).isEqualTo(1);
    }

    @Test
    void aProbeAbandonedWhileItWaitsHoldsNoSlotAndLeavesTheQueue() throws InterruptedException {
        ProbeSlots slots = new ProbeSlots(1);
        slots.join("a");
        ask(slots, "a");
        await().atMost(Duration.ofSeconds(10)).until(() -> slots.running() == 1);
        Thread waiting = ask(slots, "a");
        awaitWaiting(slots, 1);
        waiting.interrupt();
        assertThat(waiting.join(Duration.ofSeconds(10))).isTrue();
        assertThat(slots.waiting()).isZero();
        slots.release("a");
        assertThat(slots.running()).isZero();
        assertThat(slots.heldBy("a")).isZero();
        assertThat(granted).containsExactly("a");
    }

    @Test
    void atLeastOneSlot() {
        assertThatThrownBy(() -> new ProbeSlots(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("the most probes at a time must be at least 1, not 0");
    }
}
