package dev.drover.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.admission.Decision;
import dev.drover.allocrunner.AllocState;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.ClientStatus;
import dev.drover.api.v1alpha1.TaskState;
import dev.drover.state.AllocId;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class TrackedAllocationTest {

    static AllocState state(long version, TaskState.State web, TaskState.State side) {
        Map<String, TaskState> states = new LinkedHashMap<>();
        states.put("web", task(web));
        states.put("side", task(side));
        return new AllocState(version, ClientStatus.Running, "Tasks are running", 1, states);
    }

    static TaskState task(TaskState.State s) {
        TaskState t = new TaskState();
        t.setState(s);
        t.setRestarts(1);
        return t;
    }

    /**
     * Two tasks report from their own threads: the status built from the newer state reaches the writer last, even
     * when the thread with the older one is slow to hand it over (it was overtaken, and the older status, written
     * last, stayed on the API server: an allocation shown restarting for good while both tasks ran again).
     */
    @Test
    void aStatusBuiltLaterIsNeverOvertakenByAnOlderOne() throws Exception {
        TrackedAllocation t = TrackedAllocation.seen(new AllocId("default", "odd"), "uid-odd");
        Allocation a = AllocationControllerTest.alloc("odd", Map.of());
        a.getSpec()
                .setTasks(List.of(
                        AllocationControllerTest.task("web", Map.of()),
                        AllocationControllerTest.task("side", Map.of())));
        t.starting(a, 1);
        List<String> published = new CopyOnWriteArrayList<>();
        CountDownLatch handingOver = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Thread older = Thread.ofVirtual()
                .start(() -> t.stateChanged(
                        state(5, TaskState.State.Running, TaskState.State.Pending),
                        Optional.empty(),
                        null,
                        Instant.now(),
                        status -> {
                            handingOver.countDown();
                            await(release);
                            published.add(status.getReady());
                        }));
        assertThat(handingOver.await(5, TimeUnit.SECONDS)).isTrue();
        Thread newer = Thread.ofVirtual()
                .start(() -> t.stateChanged(
                        state(6, TaskState.State.Running, TaskState.State.Running),
                        Optional.empty(),
                        null,
                        Instant.now(),
                        status -> published.add(status.getReady())));
        Thread.sleep(100); // the newer one, if it could, would hand its status over now
        release.countDown();
        older.join();
        newer.join();
        assertThat(published).containsExactly("1/2", "2/2");
    }

    @Test
    void aCopyThatComesWhileTheRunnerIsCreatedFollowsTheStartInsteadOfQueueingAgain() {
        TrackedAllocation t = TrackedAllocation.seen(new AllocId("default", "web"), "uid-web");
        Allocation first = AllocationControllerTest.alloc("web", Map.of());
        Allocation second = AllocationControllerTest.alloc("web", Map.of());
        assertThat(t.admit(first)).isEqualTo(Phase.QUEUED);
        assertThat(t.slotGiven()).isSameAs(first);
        assertThat(t.slotGiven())
                .as("one runner per allocation: a second slot starts nothing")
                .isNull();
        assertThat(t.follows(second)).isTrue();
        assertThat(t.admit(second)).isEqualTo(Phase.STARTING);
        // its runner could not be created (refused): it waits for its next change, the newer copy handed back
        assertThat(t.startedWith(first, false)).isSameAs(second);
        assertThat(t.phase()).isEqualTo(Phase.NEW);
        assertThat(t.follows(second)).isFalse();
    }

    @Test
    void aSpecTheStoreCouldNotWriteStartsWithThatCopyOnceTheStoreWritesAgain() {
        TrackedAllocation t = TrackedAllocation.seen(new AllocId("default", "web"), "uid-web");
        Allocation a = AllocationControllerTest.alloc("web", Map.of());
        t.admit(a);
        t.starting(t.slotGiven(), 1);
        t.waitForStore(a, 1, "disk full", Instant.now(), status -> {});
        assertThat(t.storeRecovered()).as("not while its start is under way").isFalse();
        assertThat(t.startedWith(a, false)).isNull();
        assertThat(t.waitsForStore()).isTrue();
        assertThat(t.storeRecovered()).isTrue();
        assertThat(t.phase()).isEqualTo(Phase.QUEUED);
        assertThat(t.slotGiven()).isSameAs(a);
        assertThat(t.storeRecovered()).isFalse();
    }

    @Test
    void anAllocationReleasedWhileItsRunnerIsCreatedNeverTakesItAndReportsNothing() {
        TrackedAllocation t = TrackedAllocation.seen(new AllocId("default", "web"), "uid-web");
        Allocation a = AllocationControllerTest.alloc("web", Map.of());
        t.admit(a);
        t.starting(t.slotGiven(), 1);
        assertThat(t.release()).isNull();
        assertThat(t.attach(null)).isFalse();
        assertThat(t.startedWith(a, false)).isNull();
        assertThat(t.phase()).isEqualTo(Phase.RELEASED);
        List<String> published = new CopyOnWriteArrayList<>();
        t.stateChanged(
                state(1, TaskState.State.Dead, TaskState.State.Dead),
                Optional.empty(),
                null,
                Instant.now(),
                status -> published.add(status.getReady()));
        assertThat(published).isEmpty();
        assertThat(t.admit(a)).isEqualTo(Phase.RELEASED);
        assertThat(t.slotGiven()).isNull();
    }

    @Test
    void aRestoredAllocationReportsNothingUntilConfirmed() {
        TrackedAllocation t = TrackedAllocation.restoring(new AllocId("default", "web"), "uid-web");
        assertThat(t.confirmed()).isFalse();
        t.starting(AllocationControllerTest.alloc("web", Map.of()), 1);
        List<String> published = new CopyOnWriteArrayList<>();
        t.stateChanged(
                state(1, TaskState.State.Running, TaskState.State.Running),
                Optional.empty(),
                null,
                Instant.now(),
                status -> published.add(status.getReady()));
        assertThat(published).isEmpty();
        assertThat(t.phase()).isEqualTo(Phase.RESTORING);
    }

    @Test
    void theNodeRefusingItsFirstCopyIsNewsOnceAndForGood() {
        TrackedAllocation t = TrackedAllocation.seen(new AllocId("default", "web"), "uid-web");
        Allocation a = AllocationControllerTest.alloc("web", Map.of());
        Decision no = new Decision(false, "OutOfcpu", "cpu: asked 4000m, 1000m free", Map.of());
        assertThat(t.refuseAdmission(a, 1, no, Instant.now(), s -> {}).news()).isTrue();
        assertThat(t.refuseAdmission(a, 1, no, Instant.now(), s -> {}).news()).isFalse();
        assertThat(t.notAdmitted()).isTrue();
        assertThat(t.admit(a)).isEqualTo(Phase.NOT_ADMITTED);
        assertThat(t.slotGiven()).isNull();
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
