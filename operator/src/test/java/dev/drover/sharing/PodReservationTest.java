package dev.drover.sharing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.drover.admission.CpuMemory;
import dev.drover.admission.Decision;
import dev.drover.state.AllocId;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class PodReservationTest {

    private static final Resizer.Timing FAST = new Resizer.Timing(
            Duration.ofMillis(1), Duration.ofMillis(5), Duration.ofSeconds(5), Duration.ofMillis(50));

    /**
     * A kubelet of a node with {@code capacity} where Pods already hold {@code others}: it accepts a reservation that
     * fits beside them, defers one that fits the node only, finds one past the node infeasible; in its words.
     */
    static final class Kubelet implements Resizer {
        final CpuMemory capacity;
        volatile CpuMemory others;
        volatile CpuMemory allocated = CpuMemory.ZERO;
        final List<CpuMemory> asked = new CopyOnWriteArrayList<>();
        final Semaphore answers = new Semaphore(Integer.MAX_VALUE);

        Kubelet(CpuMemory capacity, CpuMemory others) {
            this.capacity = capacity;
            this.others = others;
        }

        @Override
        public String name() {
            return "drover-system/drover-agent-n1";
        }

        @Override
        public CpuMemory allocated() {
            return allocated;
        }

        @Override
        public Resizer.Answer resize(CpuMemory target) throws InterruptedException {
            asked.add(target);
            answers.acquire();
            if (target.cpuMillis() > capacity.cpuMillis()) {
                return new Resizer.Answer(
                        false,
                        Resizer.INFEASIBLE,
                        "Node didn't have enough capacity: cpu, requested: " + target.cpuMillis() + ", capacity: "
                                + capacity.cpuMillis());
            }
            if (target.cpuMillis() + others.cpuMillis() > capacity.cpuMillis()) {
                return new Resizer.Answer(
                        false,
                        Resizer.DEFERRED,
                        "Node didn't have enough resource: cpu, requested: " + target.cpuMillis() + ", used: "
                                + others.cpuMillis() + ", capacity: " + capacity.cpuMillis());
            }
            if (target.memoryMB() + others.memoryMB() > capacity.memoryMB()) {
                return new Resizer.Answer(
                        false,
                        Resizer.DEFERRED,
                        "Node didn't have enough resource: memory, requested: " + (target.memoryMB() << 20) + ", used: "
                                + (others.memoryMB() << 20) + ", capacity: " + (capacity.memoryMB() << 20));
            }
            allocated = target;
            return Resizer.Answer.ACCEPTED;
        }
    }

    private final ExecutorService callers = Executors.newVirtualThreadPerTaskExecutor();
    private final List<PodReservation> started = new ArrayList<>();

    @AfterEach
    void stop() {
        started.forEach(PodReservation::close);
        callers.shutdownNow();
    }

    private PodReservation reservation(Kubelet kubelet) {
        PodReservation r = new PodReservation(kubelet, FAST);
        started.add(r);
        r.begin();
        r.restore(Map.of()); // as the agent does once it knows what ran before
        return r;
    }

    private static AllocId id(int i) {
        return new AllocId("team-a", "a" + i);
    }

    @Test
    void aShareThatFitsBesideThePodsIsBookedOnceTheKubeletAcceptsIt() throws Exception {
        Kubelet kubelet = new Kubelet(new CpuMemory(4000, 8192), new CpuMemory(3000, 1024));
        PodReservation r = reservation(kubelet);

        assertThat(r.book(id(1), new CpuMemory(1000, 512))).isEmpty();

        assertThat(kubelet.allocated).isEqualTo(new CpuMemory(1000, 512));
        assertThat(r.booked()).isEqualTo(new CpuMemory(1000, 512));
    }

    @Test
    void aShareTheKubeletDefersIsRefusedNamingWhatItSaidAndTheReservationGoesBack() throws Exception {
        Kubelet kubelet = new Kubelet(new CpuMemory(4000, 8192), new CpuMemory(3000, 1024));
        PodReservation r = reservation(kubelet);

        Optional<Decision> refused = r.book(id(1), new CpuMemory(2000, 512));

        assertThat(refused).hasValueSatisfying(d -> {
            assertThat(d.reason()).isEqualTo("OutOfcpu");
            assertThat(d.message())
                    .contains("2000 millicores of CPU")
                    .contains("drover-system/drover-agent-n1")
                    .contains("Deferred")
                    .contains("Node didn't have enough resource: cpu, requested: 2000, used: 3000, capacity: 4000");
        });
        await().atMost(Duration.ofSeconds(5)).until(() -> kubelet.asked.size() >= 2);
        assertThat(kubelet.asked.getLast()).isEqualTo(CpuMemory.ZERO); // the refused resize is taken back
    }

    @Test
    void aShareLargerThanTheNodeIsRefusedAsInfeasibleAndMemoryIsNamedAsMemory() throws Exception {
        Kubelet kubelet = new Kubelet(new CpuMemory(4000, 8192), new CpuMemory(0, 7168));
        PodReservation r = reservation(kubelet);

        assertThat(r.book(id(1), new CpuMemory(5000, 0)))
                .hasValueSatisfying(d -> assertThat(d.message()).contains("Infeasible"));
        assertThat(r.book(id(2), new CpuMemory(0, 2048)))
                .hasValueSatisfying(d -> assertThat(d.reason()).isEqualTo("OutOfmemory"));
    }

    @Test
    void sharesThatWaitWhileOneResizeIsAnsweredAreBookedTogetherInOneResize() throws Exception {
        Kubelet kubelet = new Kubelet(new CpuMemory(400_000, 819_200), CpuMemory.ZERO);
        kubelet.answers.drainPermits(); // the kubelet holds its answers until told
        PodReservation r = reservation(kubelet);
        List<Future<Optional<Decision>>> answers = new ArrayList<>();
        answers.add(callers.submit(() -> r.book(id(0), new CpuMemory(100, 64))));
        await().atMost(Duration.ofSeconds(5)).until(() -> kubelet.asked.size() == 1);
        for (int i = 1; i <= 199; i++) {
            int n = i;
            answers.add(callers.submit(() -> r.book(id(n), new CpuMemory(100, 64))));
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> r.waiting() == 200);

        kubelet.answers.release(Integer.MAX_VALUE / 2);
        for (Future<Optional<Decision>> a : answers) {
            assertThat(a.get()).isEmpty();
        }

        assertThat(kubelet.asked).hasSize(2); // the first alone, then the 199 that came meanwhile
        assertThat(r.booked()).isEqualTo(new CpuMemory(20_000, 12_800));
        assertThat(r.resizes()).containsEntry(PodReservation.Outcome.ACCEPTED, 2L);
    }

    @Test
    void aBatchTheKubeletDefersIsSplitSoThatThoseThatFitAreStillBooked() throws Exception {
        Kubelet kubelet = new Kubelet(new CpuMemory(4000, 8192), new CpuMemory(1000, 0));
        kubelet.answers.drainPermits();
        PodReservation r = reservation(kubelet);
        Map<Integer, Future<Optional<Decision>>> answers = new ConcurrentHashMap<>();
        answers.put(0, callers.submit(() -> r.book(id(0), new CpuMemory(500, 0))));
        await().atMost(Duration.ofSeconds(5)).until(() -> kubelet.asked.size() == 1);
        for (int i = 1; i <= 7; i++) {
            int n = i;
            answers.put(n, callers.submit(() -> r.book(id(n), new CpuMemory(500, 0))));
            await().atMost(Duration.ofSeconds(5)).until(() -> r.waiting() == n + 1);
        }

        kubelet.answers.release(Integer.MAX_VALUE / 2);

        // 3000m free: the first and four of the seven fit, the last two do not
        long booked = 0;
        for (int i = 0; i <= 7; i++) {
            if (answers.get(i).get().isEmpty()) {
                booked++;
            } else {
                assertThat(i).as("refused in the order they came").isGreaterThanOrEqualTo(6);
            }
        }
        assertThat(booked).isEqualTo(6);
        assertThat(r.booked()).isEqualTo(new CpuMemory(3000, 0));
        assertThat(kubelet.asked.size()).as("resizes for 8 shares, two refused").isLessThanOrEqualTo(10);
    }

    @Test
    void aGivenBackShareShrinksTheReservationWithoutAnyoneWaiting() throws Exception {
        Kubelet kubelet = new Kubelet(new CpuMemory(4000, 8192), CpuMemory.ZERO);
        PodReservation r = reservation(kubelet);
        r.book(id(1), new CpuMemory(1000, 256));
        r.book(id(2), new CpuMemory(500, 256));

        r.release(id(1));

        await().atMost(Duration.ofSeconds(5)).until(() -> r.booked().equals(new CpuMemory(500, 256)));
        assertThat(kubelet.allocated).isEqualTo(new CpuMemory(500, 256));
    }

    @Test
    void restoredSharesAreBookedAgainWithoutAskingAnyoneAndTriedAgainUntilTheKubeletAccepts() throws Exception {
        Kubelet kubelet = new Kubelet(new CpuMemory(4000, 8192), new CpuMemory(3500, 0));
        PodReservation r = reservation(kubelet);

        r.restore(Map.of(id(1), new CpuMemory(1000, 0))); // the Pod was made anew: its reservation is empty
        await().atMost(Duration.ofSeconds(5)).until(() -> kubelet.asked.size() >= 2); // deferred, tried again
        assertThat(r.booked()).isEqualTo(CpuMemory.ZERO);
        kubelet.others = CpuMemory.ZERO;

        await().atMost(Duration.ofSeconds(5)).until(() -> r.booked().equals(new CpuMemory(1000, 0)));
    }

    @Test
    void theReservationFoundIsNotGivenBackBeforeTheAllocationsThatRanBeforeAreKnown() throws Exception {
        Kubelet kubelet = new Kubelet(new CpuMemory(4000, 8192), CpuMemory.ZERO);
        kubelet.allocated = new CpuMemory(800, 0); // what the agent booked before it restarted
        PodReservation r = new PodReservation(kubelet, FAST);
        started.add(r);
        r.begin();
        r.book(id(9), CpuMemory.ZERO);

        r.restore(Map.of(id(1), new CpuMemory(800, 0)));
        r.book(id(2), new CpuMemory(100, 0));

        assertThat(kubelet.asked).as("only the new share's resize").containsExactly(new CpuMemory(900, 0));
    }

    @Test
    void aShareThatAsksNothingMoreIsBookedWithoutAResize() throws Exception {
        Kubelet kubelet = new Kubelet(new CpuMemory(4000, 8192), CpuMemory.ZERO);
        PodReservation r = reservation(kubelet);

        assertThat(r.book(id(1), CpuMemory.ZERO)).isEmpty();

        assertThat(kubelet.asked).isEmpty();
    }

    @Test
    void closingRefusesTheSharesThatWaitAndEndsItsThread() throws Exception {
        Kubelet kubelet = new Kubelet(new CpuMemory(4000, 8192), CpuMemory.ZERO);
        kubelet.answers.drainPermits();
        PodReservation r = reservation(kubelet);
        Future<Optional<Decision>> answer = callers.submit(() -> r.book(id(1), new CpuMemory(100, 0)));
        await().atMost(Duration.ofSeconds(5)).until(() -> kubelet.asked.size() == 1);

        r.close();

        assertThat(answer.get()).hasValueSatisfying(d -> assertThat(d.message()).contains("stopping"));
        assertThat(Thread.getAllStackTraces().keySet().stream().map(Thread::getName))
                .doesNotContain("drover-reservation");
    }
}
