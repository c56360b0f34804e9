package dev.drover.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.testing.MockApi;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class EventRecorderTest {

    static Allocation owner(int i) {
        Allocation a = new Allocation();
        a.setMetadata(new ObjectMetaBuilder().withName("a" + i).withNamespace("default").withUid("uid-" + i).build());
        return a;
    }

    /** Item 15: the queue held 10 000 Events whatever their size; it is bounded in characters too. */
    @Test
    void theQueueIsBoundedInCharactersNotOnlyInEntries() throws Exception {
        try (MockApi api = new MockApi();
             EventRecorder events = new EventRecorder(api.client(), "node-a", new EventRate(0.001, 1))) {
            int offered = 3_000; // well under the 10 000 entries, each message cut to 1 024 characters
            for (int i = 0; i < offered; i++) {
                events.recordForAllocation(owner(i), true, "FailedValidation", "x".repeat(100_000), Instant.EPOCH);
            }
            long kept = offered - events.dropped();
            assertThat(kept * EventRecorder.MESSAGE_LIMIT).as("characters queued")
                    .isLessThanOrEqualTo(EventRecorder.QUEUE_CHARS + EventRecorder.MESSAGE_LIMIT);
            assertThat(events.dropped()).isPositive();
        }
    }

    @Test
    void oneAllocationGetsItsShareAndNoMore() throws Exception {
        try (MockApi api = new MockApi();
             EventRecorder events = new EventRecorder(api.client(), "node-a", new EventRate(0.001, 1))) {
            for (int i = 0; i < 1_000; i++) {
                events.recordForAllocation(owner(0), false, "Restarting", "again", Instant.EPOCH);
            }
            assertThat(events.dropped()).as("past its burst of %d", EventRecorder.PER_ALLOCATION.burst())
                    .isBetween(1_000L - EventRecorder.PER_ALLOCATION.burst() - 5, 1_000L - EventRecorder.PER_ALLOCATION.burst());
            events.recordForAllocation(owner(1), false, "Started", "another allocation", Instant.EPOCH);
            assertThat(events.dropped()).as("another allocation is not held back")
                    .isLessThanOrEqualTo(1_000L - EventRecorder.PER_ALLOCATION.burst());
        }
    }
}
