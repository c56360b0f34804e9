package dev.drover.controller.status;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.drover.api.v1alpha1.AllocationStatus;
import dev.drover.api.v1alpha1.ClientStatus;
import dev.drover.state.AllocId;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class StatusWriterTest {

    record Write(AllocId id, AllocationStatus status, long atNanos) {}

    static final AllocId WEB = new AllocId("default", "web");
    final List<Write> writes = new CopyOnWriteArrayList<>();
    final AtomicInteger failuresLeft = new AtomicInteger();
    final StatusWriter.Timing timing = new StatusWriter.Timing(
            Duration.ofMillis(400), Duration.ofSeconds(10), Duration.ofMillis(20), Duration.ofMillis(100));
    final StatusWriter writer = new StatusWriter(
            (id, status) -> {
                if (failuresLeft.getAndDecrement() > 0) {
                    throw new IllegalStateException("apiserver unavailable");
                }
                writes.add(new Write(id, status, System.nanoTime()));
            },
            timing);

    @AfterEach
    void close() {
        writer.close();
    }

    static AllocationStatus status(ClientStatus s, String ready) {
        AllocationStatus st = new AllocationStatus();
        st.setClientStatus(s);
        st.setReady(ready);
        return st;
    }

    @Test
    void aClientStatusChangeIsWrittenAtOnce() {
        long start = System.nanoTime();
        writer.publish(WEB, status(ClientStatus.Running, "1/1"));
        await().atMost(Duration.ofSeconds(2)).until(() -> writes.size() == 1);
        assertThat(Duration.ofNanos(writes.getFirst().atNanos() - start)).isLessThan(Duration.ofMillis(200));
    }

    @Test
    void aStartWithinThePendingDelayIsOneWriteOfRunning() {
        List<AllocationStatus> sent = new CopyOnWriteArrayList<>();
        try (StatusWriter patient = new StatusWriter(
                (id, status) -> sent.add(status),
                new StatusWriter.Timing(
                        Duration.ofSeconds(5),
                        Duration.ofSeconds(30),
                        Duration.ofMillis(20),
                        Duration.ofMillis(100),
                        Duration.ofMillis(10),
                        Duration.ofSeconds(2)))) {
            long start = System.nanoTime();
            patient.publish(WEB, status(ClientStatus.Pending, "0/1"));
            patient.publish(WEB, status(ClientStatus.Pending, "0/1 setting up"));
            patient.publish(WEB, status(ClientStatus.Running, "1/1"));
            await().atMost(Duration.ofSeconds(2)).until(() -> !sent.isEmpty());
            assertThat(Duration.ofNanos(System.nanoTime() - start))
                    .as("Running is a clientStatus change: written at once")
                    .isLessThan(Duration.ofSeconds(2));
            assertThat(sent)
                    .as("Pending never written")
                    .extracting(AllocationStatus::getClientStatus)
                    .containsExactly(ClientStatus.Running);
        }
    }

    @Test
    void aPendingStatusThatLastsIsWrittenAfterThePendingDelayNotTheBatchDelay() {
        List<Long> sentAt = new CopyOnWriteArrayList<>();
        try (StatusWriter patient = new StatusWriter(
                (id, status) -> sentAt.add(System.nanoTime()),
                new StatusWriter.Timing(
                        Duration.ofSeconds(5),
                        Duration.ofSeconds(30),
                        Duration.ofMillis(20),
                        Duration.ofMillis(100),
                        Duration.ofMillis(10),
                        Duration.ofMillis(300)))) {
            long start = System.nanoTime();
            patient.publish(WEB, status(ClientStatus.Pending, "0/1"));
            await().atMost(Duration.ofSeconds(4)).until(() -> !sentAt.isEmpty());
            assertThat(Duration.ofNanos(sentAt.getFirst() - start))
                    .isGreaterThanOrEqualTo(Duration.ofMillis(300))
                    .isLessThan(Duration.ofSeconds(4));
        }
    }

    @Test
    void thePendingDelayIs200MsOrTheBatchDelayIfShorter() {
        assertThat(StatusWriter.Timing.DEFAULT.pendingDelay()).isEqualTo(Duration.ofMillis(200));
        assertThat(timing.pendingDelay()).isEqualTo(Duration.ofMillis(200));
        assertThat(new StatusWriter.Timing(
                                Duration.ofMillis(50),
                                Duration.ofSeconds(10),
                                Duration.ofMillis(20),
                                Duration.ofMillis(100))
                        .pendingDelay())
                .isEqualTo(Duration.ofMillis(50));
    }

    @Test
    void otherChangesAreBatchedIntoOneWriteOfTheNewest() throws Exception {
        writer.publish(WEB, status(ClientStatus.Running, "0/2"));
        await().atMost(Duration.ofSeconds(2)).until(() -> writes.size() == 1);
        long start = System.nanoTime();
        writer.publish(WEB, status(ClientStatus.Running, "1/2"));
        writer.publish(WEB, status(ClientStatus.Running, "2/2"));
        await().atMost(Duration.ofSeconds(3)).until(() -> writes.size() == 2);
        assertThat(writes.get(1).status().getReady()).isEqualTo("2/2");
        assertThat(Duration.ofNanos(writes.get(1).atNanos() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(350));
        Thread.sleep(500);
        assertThat(writes).hasSize(2);
    }

    @Test
    void anIdenticalStatusIsNeverWritten() throws Exception {
        writer.publish(WEB, status(ClientStatus.Running, "1/1"));
        await().atMost(Duration.ofSeconds(2)).until(() -> writes.size() == 1);
        writer.publish(WEB, status(ClientStatus.Running, "1/1"));
        writer.publish(WEB, status(ClientStatus.Running, "1/1"));
        Thread.sleep(600);
        assertThat(writes).hasSize(1);
        assertThat(writer.skipped()).isEqualTo(2);
        assertThat(writer.writes()).isEqualTo(1);
    }

    @Test
    void theWatchsEqualCopyOfAWrittenStatusIsSwappedForTheWritersOwn() {
        AllocationStatus published = status(ClientStatus.Running, "1/1");
        writer.publish(WEB, published);
        await().atMost(Duration.ofSeconds(2))
                .until(() -> writes.size() == 1 && writer.sameAs(WEB, published) == published);

        AllocationStatus readBack = status(ClientStatus.Running, "1/1"); // as deserialized from the watch
        assertThat(writer.sameAs(WEB, readBack)).isSameAs(published);
        AllocationStatus editedByHand = status(ClientStatus.Running, "0/1");
        assertThat(writer.sameAs(WEB, editedByHand)).isSameAs(editedByHand);
        AllocationStatus other = status(ClientStatus.Running, "1/1");
        assertThat(writer.sameAs(new AllocId("default", "other"), other)).isSameAs(other);
    }

    @Test
    void aChangeUndoneBeforeItsWriteIsNotWritten() throws Exception {
        writer.publish(WEB, status(ClientStatus.Running, "1/1"));
        await().atMost(Duration.ofSeconds(2)).until(() -> writes.size() == 1);
        writer.publish(WEB, status(ClientStatus.Running, "0/1"));
        writer.publish(WEB, status(ClientStatus.Running, "1/1"));
        Thread.sleep(600);
        assertThat(writes).hasSize(1);
    }

    @Test
    void aFailedWriteIsRetriedWithBackoff() {
        failuresLeft.set(3);
        writer.publish(WEB, status(ClientStatus.Complete, "0/1"));
        await().atMost(Duration.ofSeconds(3)).until(() -> writes.size() == 1);
        assertThat(writes.getFirst().status().getClientStatus()).isEqualTo(ClientStatus.Complete);
    }

    @Test
    void forgottenAllocationsAreNotWritten() throws Exception {
        writer.publish(WEB, status(ClientStatus.Running, "1/1"));
        await().atMost(Duration.ofSeconds(2)).until(() -> writes.size() == 1);
        writer.publish(WEB, status(ClientStatus.Running, "0/1"));
        writer.forget(WEB);
        Thread.sleep(600);
        assertThat(writes).hasSize(1);
    }

    @Test
    void anInvalidatedStatusIsWrittenAgain() {
        writer.publish(WEB, status(ClientStatus.Running, "1/1"));
        await().atMost(Duration.ofSeconds(2)).until(() -> writes.size() == 1);
        writer.invalidate(WEB);
        await().atMost(Duration.ofSeconds(2)).until(() -> writes.size() == 2);
        assertThat(writes.get(1).status()).isEqualTo(writes.get(0).status());
    }

    @Test
    void closeJoinsTheWriterThreadAndTheWritesInFlight() {
        List<Thread> writerThread = new CopyOnWriteArrayList<>();
        java.util.concurrent.atomic.AtomicBoolean finished = new java.util.concurrent.atomic.AtomicBoolean();
        StatusWriter w = new StatusWriter(
                (id, s) -> {
                    writerThread.add(Thread.currentThread());
                    Thread.sleep(300);
                    finished.set(true);
                },
                StatusWriter.Timing.DEFAULT);
        w.publish(WEB, status(ClientStatus.Running, "1/1"));
        await().atMost(Duration.ofSeconds(2)).until(() -> !writerThread.isEmpty());
        w.close();
        assertThat(finished)
                .as("the write in flight ended before close returned")
                .isTrue();
        await().atMost(Duration.ofSeconds(1))
                .until(() -> !writerThread.getFirst().isAlive()); // its last instructions
        assertThat(w.alive()).isFalse();
    }

    @Test
    void aSlowApiServerDoesNotHoldOtherAllocationsBackAndOneAllocationIsNeverWrittenTwiceAtOnce() throws Exception {
        java.util.Map<AllocId, AtomicInteger> concurrent = new java.util.concurrent.ConcurrentHashMap<>();
        AtomicInteger overlaps = new AtomicInteger();
        List<Write> slow = new CopyOnWriteArrayList<>();
        try (StatusWriter w = new StatusWriter(
                (id, s) -> {
                    if (concurrent.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet() > 1) {
                        overlaps.incrementAndGet();
                    }
                    Thread.sleep(200); // a round trip to a loaded API server
                    slow.add(new Write(id, s, System.nanoTime()));
                    concurrent.get(id).decrementAndGet();
                },
                timing)) {
            long start = System.nanoTime();
            for (int i = 0; i < StatusWriter.IN_FLIGHT; i++) {
                w.publish(new AllocId("default", "web-" + i), status(ClientStatus.Running, "1/1"));
            }
            await().atMost(Duration.ofSeconds(5)).until(() -> slow.size() == StatusWriter.IN_FLIGHT);
            assertThat(Duration.ofNanos(System.nanoTime() - start))
                    .as("written side by side, not one after another")
                    .isLessThan(Duration.ofMillis(200L * StatusWriter.IN_FLIGHT / 2));
            for (int i = 0; i < 5; i++) { // one allocation changing while its write is in flight
                w.publish(WEB, status(i % 2 == 0 ? ClientStatus.Running : ClientStatus.Failed, i + "/1"));
                Thread.sleep(50);
            }
            await().atMost(Duration.ofSeconds(5))
                    .until(() -> slow.stream()
                            .filter(x -> x.id().equals(WEB))
                            .anyMatch(x -> x.status().getReady().equals("4/1")));
        }
        assertThat(overlaps).hasValue(0);
    }

    /** Many allocations due at once and one due later: each is written once, and the later one at its time. */
    @Test
    void thousandsOfAllocationsAreEachWrittenOnceAndALaterOneAtItsTime() {
        int n = 3000;
        AllocId pending = new AllocId("default", "pending"); // waits its 200 ms
        long published = System.nanoTime();
        writer.publish(pending, status(ClientStatus.Pending, "0/1"));
        for (int i = 0; i < n; i++) {
            writer.publish(new AllocId("default", "a-" + i), status(ClientStatus.Running, "1/1"));
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> writes.size() >= n + 1);
        assertThat(writes.stream().map(Write::id).distinct()).hasSize(n + 1);
        assertThat(writes).hasSize(n + 1);
        Write late =
                writes.stream().filter(w -> w.id().equals(pending)).findFirst().orElseThrow();
        assertThat(Duration.ofNanos(late.atNanos() - published)).isGreaterThanOrEqualTo(Duration.ofMillis(200));
    }

    /** Item 15: whatever an allocation holds, the status sent stays under 64 KiB and keeps its counts. */
    @Test
    void aStatusIsWrittenUnder64KibWhateverItHolds() throws Exception {
        AllocationStatus big = status(ClientStatus.Running, "64/64");
        big.setRestarts(64 * 7);
        big.setClientDescription("d".repeat(100_000));
        for (int t = 0; t < 64; t++) {
            dev.drover.api.v1alpha1.TaskState ts = new dev.drover.api.v1alpha1.TaskState();
            ts.setState(dev.drover.api.v1alpha1.TaskState.State.Running);
            ts.setRestarts(7);
            for (int e = 0; e < 10; e++) {
                ts.getEvents()
                        .add(dev.drover.api.v1alpha1.TaskEvent.of(
                                        dev.drover.api.v1alpha1.TaskEventType.Restarting, java.time.Instant.EPOCH)
                                .withMessage("m".repeat(10_000))
                                .withValidationError("v".repeat(5_000)));
            }
            big.getTaskStates().put("task-" + "x".repeat(50) + t, ts);
        }
        writer.publish(WEB, big);
        await().atMost(Duration.ofSeconds(2)).until(() -> writes.size() == 1);
        AllocationStatus written = writes.getFirst().status();
        assertThat(new com.fasterxml.jackson.databind.ObjectMapper().writeValueAsBytes(written).length)
                .isLessThanOrEqualTo(64 * 1024);
        assertThat(written.getRestarts()).isEqualTo(64 * 7);
        assertThat(written.getTaskStates()).hasSize(64).allSatisfy((name, ts) -> {
            assertThat(ts.getRestarts()).isEqualTo(7);
            assertThat(ts.getState()).isEqualTo(dev.drover.api.v1alpha1.TaskState.State.Running);
        });
        assertThat(written.getClientDescription()).endsWith("... (100000 characters)");
        writer.publish(WEB, big);
        Thread.sleep(300);
        assertThat(writes).as("the same big status again is no change").hasSize(1);
    }

    /** After an agent restart, the API server holds a big status cut to its bound: the same status is no change. */
    @Test
    void aRestartedAgentsBigStatusThatTheApiServerHoldsCutIsNotWrittenAgain() throws Exception {
        AllocationStatus big = status(ClientStatus.Running, "1/1");
        big.setClientDescription("d".repeat(100_000));
        AllocId before = new AllocId("default", "seen-first");
        writer.observed(before, StatusBound.fit(big));
        writer.publish(before, big);
        Thread.sleep(1_000); // past the 400 ms batch delay
        assertThat(writes).isEmpty();
        writer.publish(before, big);
        Thread.sleep(600);
        assertThat(writes).isEmpty();
    }

    @Test
    void aStatusBackToTheWrittenOneWhileAnotherIsInFlightIsWrittenAfterIt() throws Exception {
        java.util.concurrent.CountDownLatch inFlight = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        List<AllocationStatus> sent = new CopyOnWriteArrayList<>();
        AllocationStatus running = status(ClientStatus.Running, "2/2");
        AllocationStatus restarting = status(ClientStatus.Running, "1/2");
        try (StatusWriter slow = new StatusWriter(
                (id, status) -> {
                    if (status.equals(restarting)) {
                        inFlight.countDown();
                        release.await();
                    }
                    sent.add(status);
                },
                new StatusWriter.Timing(
                        Duration.ofMillis(10),
                        Duration.ofSeconds(30),
                        Duration.ofMillis(20),
                        Duration.ofMillis(100),
                        Duration.ofMillis(10)))) {
            slow.publish(WEB, running);
            await().atMost(Duration.ofSeconds(2)).until(() -> sent.size() == 1);
            slow.publish(WEB, restarting);
            assertThat(inFlight.await(2, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            slow.publish(WEB, status(ClientStatus.Running, "2/2")); // the task is back while "1/2" is on its way
            release.countDown();
            await().atMost(Duration.ofSeconds(2))
                    .untilAsserted(() -> assertThat(sent)
                            .as("what the API server got, in order")
                            .containsExactly(running, restarting, running));
        }
    }
}
