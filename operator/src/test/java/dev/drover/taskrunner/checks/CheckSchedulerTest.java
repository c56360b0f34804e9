package dev.drover.taskrunner.checks;

import static dev.drover.api.v1alpha1.CheckStatus.Status.CRITICAL;
import static dev.drover.api.v1alpha1.CheckStatus.Status.PASSING;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.drover.api.v1alpha1.Check;
import dev.drover.api.v1alpha1.CheckType;
import dev.drover.testing.LiveThreads;
import io.fabric8.kubernetes.api.model.IntOrString;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class CheckSchedulerTest {

    /** One result as the listener got it, and on which thread. */
    record Got(String check, ProbeResult result, String thread) {}

    /** A probe each call of which waits until the test lets one through; it counts calls and how many ran at once. */
    static final class GatedProbe implements Probe {
        final Semaphore gate = new Semaphore(0);
        final AtomicInteger calls = new AtomicInteger();
        final AtomicInteger inside = new AtomicInteger();
        final AtomicInteger mostInside = new AtomicInteger();
        final AtomicInteger interrupted = new AtomicInteger();
        volatile boolean ignoreInterrupts;

        @Override
        public ProbeResult run(Check check, CheckProber.Target target) throws InterruptedException {
            int n = calls.incrementAndGet();
            mostInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
            try {
                if (ignoreInterrupts) {
                    gate.acquireUninterruptibly();
                    if (Thread.interrupted()) {
                        interrupted.incrementAndGet();
                    }
                } else {
                    gate.acquire();
                }
                return ProbeResult.passing(check.getName() + " #" + n);
            } catch (InterruptedException e) {
                interrupted.incrementAndGet();
                throw e;
            } finally {
                inside.decrementAndGet();
            }
        }
    }

    static final String ALLOC = "default/web";

    static final CheckProber.Target NO_EXEC = request -> {
        throw new AssertionError("no command expected");
    };

    final ManualTimer timer = new ManualTimer();
    final GatedProbe gated = new GatedProbe();
    final BlockingQueue<Got> results = new LinkedBlockingQueue<>();
    final CheckProber.Listener listener = (check, result) ->
            results.add(new Got(check.getName(), result, Thread.currentThread().getName()));
    CheckScheduler scheduler;

    @AfterEach
    void close() {
        if (scheduler != null) {
            gated.gate.release(1000);
            scheduler.close();
        }
    }

    CheckScheduler scheduler(Probe probe, int maxConcurrent) {
        scheduler = new CheckScheduler(timer, Jitter.NONE, probe, maxConcurrent);
        return scheduler;
    }

    static Check check(String name, String initialDelay, String interval, String timeout) {
        Check c = new Check(name, CheckType.TCP);
        c.setPort(new IntOrString(1));
        c.setInitialDelay(initialDelay);
        c.setInterval(interval);
        c.setTimeout(timeout);
        return c;
    }

    Got next() throws InterruptedException {
        Got got = results.poll(10, TimeUnit.SECONDS);
        assertThat(got).as("a result").isNotNull();
        return got;
    }

    void awaitIdle() {
        await().atMost(Duration.ofSeconds(10)).until(() -> scheduler.liveThreads() == 0);
    }

    @Test
    void firstProbeAtInitialDelayThenEveryIntervalFromWhenTheLastWasDue() throws Exception {
        scheduler(gated, 4).probe(ALLOC, NO_EXEC, List.of(check("a", "5s", "10s", "5s")), listener);

        timer.advance(Duration.ofMillis(4999));
        assertThat(scheduler.liveThreads()).as("no probe before initialDelay").isZero();
        timer.advance(Duration.ofMillis(1));
        assertThat(scheduler.liveThreads()).as("a probe at initialDelay").isEqualTo(1);
        // This probe takes 3 s; the next is still due 10 s after this one was, not 10 s after it ended.
        timer.advance(Duration.ofSeconds(3));
        gated.gate.release();
        assertThat(next().result()).isEqualTo(ProbeResult.passing("a #1"));
        awaitIdle();

        timer.advance(Duration.ofMillis(6999));
        assertThat(scheduler.liveThreads()).isZero();
        timer.advance(Duration.ofMillis(1));
        assertThat(scheduler.liveThreads()).as("a probe at 15 s").isEqualTo(1);
        gated.gate.release();
        assertThat(next().result()).isEqualTo(ProbeResult.passing("a #2"));
        awaitIdle();
        timer.advance(Duration.ofSeconds(10));
        assertThat(scheduler.liveThreads()).as("a probe at 25 s").isEqualTo(1);
    }

    @Test
    void jitterPutsTheFirstProbeOff() throws Exception {
        scheduler = new CheckScheduler(timer, interval -> Duration.ofMillis(700), gated, 4);
        scheduler.probe(ALLOC, NO_EXEC, List.of(check("a", "1s", "10s", "2s")), listener);
        timer.advance(Duration.ofMillis(1699));
        assertThat(scheduler.liveThreads()).isZero();
        timer.advance(Duration.ofMillis(1));
        assertThat(scheduler.liveThreads()).isEqualTo(1);
    }

    @Test
    void defaultJitterSpreadsFirstProbesOverATenthOfTheInterval() {
        Jitter jitter = Jitter.spread();
        List<Duration> delays = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            delays.add(jitter.delay(Duration.ofSeconds(10)));
        }
        assertThat(delays).allSatisfy(d -> assertThat(d).isBetween(Duration.ZERO, Duration.ofMillis(1000)));
        // Evenly: each tenth of the spread gets about a tenth of the checks.
        int[] buckets = new int[10];
        delays.forEach(d -> buckets[(int) (d.toMillis() / 100)]++);
        assertThat(java.util.Arrays.stream(buckets).boxed().toList())
                .allSatisfy(n -> assertThat(n).isBetween(180, 220));
        assertThat(Jitter.spread().delay(Duration.ofSeconds(10)))
                .as("deterministic")
                .isEqualTo(delays.getFirst());
    }

    @Test
    void resultsOfOneTaskReachItsListenerOneAtATimeOnAThreadOfTheScheduler() throws Exception {
        CountDownLatch letGo = new CountDownLatch(1);
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger mostInside = new AtomicInteger();
        AtomicInteger entered = new AtomicInteger();
        CheckProber.Listener slow = (check, result) -> {
            entered.incrementAndGet();
            mostInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
            try {
                letGo.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            inside.decrementAndGet();
            listener.result(check, result);
        };
        scheduler((check, target) -> ProbeResult.passing(check.getName()), 4)
                .probe(ALLOC, NO_EXEC, List.of(check("a", "0s", "10s", "2s"), check("b", "0s", "10s", "2s")), slow);
        timer.advance(Duration.ZERO);
        // Both probes have ended; one result is held in the listener, the other waits behind it.
        await().atMost(Duration.ofSeconds(10)).until(() -> entered.get() == 1 && scheduler.liveThreads() == 1);
        assertThat(entered.get()).isEqualTo(1);
        letGo.countDown();
        Set<String> checks = new HashSet<>();
        for (int i = 0; i < 2; i++) {
            Got got = next();
            checks.add(got.check());
            assertThat(got.thread()).isEqualTo(CheckScheduler.RESULT_THREAD_NAME);
        }
        assertThat(checks).containsExactlyInAnyOrder("a", "b");
        assertThat(mostInside.get()).isEqualTo(1);
    }

    @Test
    void hangingProbeTimesOutAndDoesNotPileUp() throws Exception {
        gated.ignoreInterrupts = true;
        scheduler(gated, 4).probe(ALLOC, NO_EXEC, List.of(check("a", "0s", "1s", "1s")), listener);
        timer.advance(Duration.ZERO);
        await().atMost(Duration.ofSeconds(10)).until(() -> gated.calls.get() == 1);

        timer.advance(Duration.ofSeconds(1));
        Got timedOut = next();
        assertThat(timedOut.result()).isEqualTo(ProbeResult.critical("timed out after 1s"));
        timer.advance(Duration.ofSeconds(5));
        assertThat(scheduler.skippedBusy())
                .as("a probe due every second while the first hangs")
                .isEqualTo(6);
        // The hanging probe's thread alone, once the timeout's result has been handed on.
        await().atMost(Duration.ofSeconds(10)).until(() -> scheduler.liveThreads() == 1);
        assertThat(gated.calls.get()).isEqualTo(1);

        gated.gate.release(); // it ends at last: what it found comes too late and is dropped
        awaitIdle();
        assertThat(gated.interrupted.get()).as("interrupted at its timeout").isEqualTo(1);
        gated.gate.release();
        timer.advance(Duration.ofSeconds(1));
        assertThat(next().result())
                .as("the next probe's result, not the dropped one")
                .isEqualTo(ProbeResult.passing("a #2"));
    }

    @Test
    void noMoreProbesRunAtOnceThanTheBoundAndTheRestWaitTheirTurn() throws Exception {
        scheduler(gated, 2);
        for (String name : List.of("a", "b", "c")) { // three allocations: one slot each at most
            scheduler.probe("default/" + name, NO_EXEC, List.of(check(name, "0s", "10s", "10s")), listener);
        }
        timer.advance(Duration.ZERO);
        await().atMost(Duration.ofSeconds(10)).until(() -> gated.calls.get() == 2 && scheduler.waitingProbes() == 1);
        assertThat(scheduler.runningProbes()).isEqualTo(2);

        gated.gate.release();
        await().atMost(Duration.ofSeconds(10)).until(() -> gated.calls.get() == 3);
        gated.gate.release(2);
        Set<String> checks = new HashSet<>();
        for (int i = 0; i < 3; i++) {
            Got got = next();
            assertThat(got.result().status()).isEqualTo(PASSING);
            checks.add(got.check());
        }
        assertThat(checks).containsExactlyInAnyOrder("a", "b", "c");
        assertThat(gated.mostInside.get()).isEqualTo(2);
    }

    @Test
    void probeDueWhileTheLastStillWaitsForASlotIsSkipped() throws Exception {
        scheduler(gated, 1)
                .probe(ALLOC, NO_EXEC, List.of(check("a", "0s", "10s", "10s"), check("b", "1s", "2s", "2s")), listener);
        timer.advance(Duration.ZERO);
        await().atMost(Duration.ofSeconds(10)).until(() -> gated.calls.get() == 1);
        timer.advance(Duration.ofSeconds(1));
        await().atMost(Duration.ofSeconds(10)).until(() -> scheduler.waitingProbes() == 1);
        timer.advance(Duration.ofSeconds(2));
        assertThat(scheduler.skippedSaturated()).isEqualTo(1);
        assertThat(scheduler.skippedBusy()).isZero();
        io.prometheus.client.CollectorRegistry registry = new io.prometheus.client.CollectorRegistry();
        new ProbeMetrics(scheduler).register(registry);
        assertThat(registry.getSampleValue(
                        "drover_check_probes_skipped_total", new String[] {"reason"}, new String[] {"saturated"}))
                .as("the scrape shows it")
                .isEqualTo(1.0);
        assertThat(registry.getSampleValue("drover_check_probes", new String[] {"state"}, new String[] {"running"}))
                .isEqualTo(1.0);
        assertThat(registry.getSampleValue("drover_check_probes", new String[] {"state"}, new String[] {"waiting"}))
                .isEqualTo(1.0);

        gated.gate.release(2);
        assertThat(next().check()).isEqualTo("a");
        assertThat(next().result()).isEqualTo(ProbeResult.passing("b #2"));
    }

    @Test
    void oneAllocationsHangingChecksCannotStarveAnotherAllocationsCheck() throws Exception {
        // The hog's probes hang (until their timeout, not reached here); the other's pass at once.
        Probe probe = (check, target) ->
                check.getName().startsWith("hang") ? gated.run(check, target) : ProbeResult.passing("ok");
        scheduler(probe, CheckScheduler.DEFAULT_MAX_CONCURRENT_PROBES);
        for (int task = 0; task < 8; task++) { // 8 tasks of 8 checks: 64 checks, as many as the slots
            List<Check> checks = new ArrayList<>();
            for (int c = 0; c < 8; c++) {
                checks.add(check("hang-" + task + "-" + c, "0s", "10s", "10s"));
            }
            scheduler.probe("default/hog", NO_EXEC, checks, listener);
        }
        timer.advance(Duration.ZERO);
        await().atMost(Duration.ofSeconds(10)).until(() -> gated.calls.get() + scheduler.waitingProbes() >= 64);

        scheduler.probe("default/web", NO_EXEC, List.of(check("web", "0s", "1s", "1s")), listener);
        timer.advance(Duration.ZERO);
        Got got = next();
        assertThat(got.check()).isEqualTo("web");
        assertThat(got.result()).isEqualTo(ProbeResult.passing("ok"));
        // The web probe's thread and the results' have ended: the hog's 64 are left (32 in slots, 32 waiting).
        await().atMost(Duration.ofSeconds(10)).until(() -> scheduler.liveThreads() == 64);
        timer.advance(Duration.ofSeconds(1));
        assertThat(next().result()).as("and every interval after").isEqualTo(ProbeResult.passing("ok"));
        assertThat(scheduler.slotsHeldBy("default/hog"))
                .as("the hog holds its share as it was alone (half of the slots), no more")
                .isEqualTo(ProbeSlots.share(64, 1))
                .isEqualTo(gated.inside.get());
    }

    @Test
    void aCheckWhoseProbeWaitsForASlotIsStaleUntilItsNextResult() throws Exception {
        BlockingQueue<String> stale = new LinkedBlockingQueue<>();
        CheckProber.Listener telling = new CheckProber.Listener() {
            @Override
            public void result(Check check, ProbeResult result) {
                listener.result(check, result);
            }

            @Override
            public void stale(Check check) {
                stale.add(check.getName() + " on " + Thread.currentThread().getName());
            }
        };
        scheduler(gated, 1).probe(ALLOC, NO_EXEC, List.of(check("a", "0s", "10s", "10s")), listener);
        scheduler.probe("default/other", NO_EXEC, List.of(check("b", "1s", "2s", "2s")), telling);
        timer.advance(Duration.ZERO);
        await().atMost(Duration.ofSeconds(10)).until(() -> gated.calls.get() == 1);
        timer.advance(Duration.ofSeconds(1)); // b's first probe: waits for a's slot
        await().atMost(Duration.ofSeconds(10)).until(() -> scheduler.waitingProbes() == 1);
        assertThat(scheduler.staleChecks()).isZero();

        timer.advance(Duration.ofSeconds(2)); // b's next: its first still waits
        assertThat(stale.poll(10, TimeUnit.SECONDS)).isEqualTo("b on " + CheckScheduler.RESULT_THREAD_NAME);
        assertThat(scheduler.staleChecks()).isEqualTo(1);
        timer.advance(Duration.ofSeconds(2));
        assertThat(scheduler.staleChecks()).as("one check, stale once").isEqualTo(1);
        io.prometheus.client.CollectorRegistry registry = new io.prometheus.client.CollectorRegistry();
        new ProbeMetrics(scheduler).register(registry);
        assertThat(registry.getSampleValue("drover_check_stale")).isEqualTo(1.0);

        gated.gate.release(2); // a ends; b's waiting probe runs and passes: fresh again
        Set<String> got = new HashSet<>(List.of(next().check(), next().check()));
        assertThat(got).containsExactlyInAnyOrder("a", "b");
        assertThat(scheduler.staleChecks()).isZero();
        assertThat(registry.getSampleValue("drover_check_stale")).isEqualTo(0.0);
        assertThat(stale).as("told once").isEmpty();
    }

    @Test
    void aStaleCheckWhoseProbingEndsCountsStaleNoMore() throws Exception {
        CheckProber.Probing probing = scheduler(gated, 1)
                .probe(ALLOC, NO_EXEC, List.of(check("a", "0s", "10s", "10s"), check("b", "1s", "1s", "1s")), listener);
        timer.advance(Duration.ZERO);
        await().atMost(Duration.ofSeconds(10)).until(() -> gated.calls.get() == 1);
        timer.advance(Duration.ofSeconds(1)); // b's first probe waits for a's slot
        await().atMost(Duration.ofSeconds(10)).until(() -> scheduler.waitingProbes() == 1);
        timer.advance(Duration.ofSeconds(1));
        assertThat(scheduler.staleChecks()).isEqualTo(1);
        probing.close();
        assertThat(scheduler.staleChecks()).isZero();
        awaitIdle();
    }

    @Test
    void closedProbingAbandonsItsProbeAndDeliversNothingMore() throws Exception {
        CheckProber.Probing probing =
                scheduler(gated, 4).probe(ALLOC, NO_EXEC, List.of(check("a", "0s", "1s", "1s")), listener);
        timer.advance(Duration.ZERO);
        await().atMost(Duration.ofSeconds(10)).until(() -> gated.calls.get() == 1);

        probing.close(); // returns at once: the probe is never let through
        awaitIdle();
        assertThat(gated.interrupted.get()).isEqualTo(1);
        timer.advance(Duration.ofMinutes(1));
        assertThat(timer.pending()).as("nothing scheduled for a closed probing").isZero();
        assertThat(scheduler.liveThreads()).isZero();
        assertThat(results).isEmpty();
    }

    @Test
    void resultFoundAfterCloseIsDropped() throws Exception {
        gated.ignoreInterrupts = true;
        CheckProber.Probing probing =
                scheduler(gated, 4).probe(ALLOC, NO_EXEC, List.of(check("a", "0s", "1s", "1s")), listener);
        timer.advance(Duration.ZERO);
        await().atMost(Duration.ofSeconds(10)).until(() -> gated.calls.get() == 1);
        probing.close();
        gated.gate.release();
        awaitIdle(); // the probe has ended: its result was handed on or dropped before its thread ended
        assertThat(results).isEmpty();
    }

    @Test
    void failingProbeIsCriticalAndFailingListenerStopsNothing() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        Probe probe = (check, target) -> {
            if (calls.incrementAndGet() == 1) {
                throw new IllegalStateException("boom\nsecond line\u001b[0m");
            }
            return ProbeResult.passing("fine");
        };
        AtomicInteger heard = new AtomicInteger();
        scheduler(probe, 4).probe(ALLOC, NO_EXEC, List.of(check("a", "0s", "1s", "1s")), (check, result) -> {
            listener.result(check, result);
            if (heard.incrementAndGet() == 1) {
                throw new IllegalStateException("a listener's bug");
            }
        });
        timer.advance(Duration.ZERO);
        assertThat(next().result())
                .isEqualTo(ProbeResult.critical(
                        "the probe failed: java.lang.IllegalStateException: boom second line\uFFFD[0m"));
        awaitIdle();
        timer.advance(Duration.ofSeconds(1));
        assertThat(next().result()).isEqualTo(ProbeResult.passing("fine"));
    }

    @Test
    void closeEndsEveryThreadAndRefusesNewProbings() throws Exception {
        Set<Long> before = LiveThreads.ids(LiveThreads.now());
        GatedProbe hanging = new GatedProbe();
        try (ServerSocket port = new ServerSocket(0, 50, TcpProbe.LOOPBACK)) {
            // The agent's own: its thread, its timer, its jitter and the real probes.
            CheckScheduler real = new CheckScheduler(4);
            Check tcp = new Check("port", CheckType.TCP);
            tcp.setPort(new IntOrString(port.getLocalPort()));
            tcp.setInterval("1s");
            real.probe(ALLOC, NO_EXEC, List.of(tcp), listener);
            Got got = next();
            assertThat(got.result()).isEqualTo(ProbeResult.passing("connected"));
            assertThat(got.thread()).isEqualTo(CheckScheduler.RESULT_THREAD_NAME);
            // And a probe that hangs, on a real timer.
            CheckScheduler withHanging =
                    new CheckScheduler(CheckTimer.threaded(CheckScheduler.THREAD_NAME), Jitter.NONE, hanging, 4);
            withHanging.probe(ALLOC, NO_EXEC, List.of(check("a", "0s", "10s", "10s")), listener);
            await().atMost(Duration.ofSeconds(10)).until(() -> hanging.calls.get() == 1);

            real.close();
            withHanging.close();
            assertThat(LiveThreads.startedSince(before, t -> !t.name().startsWith("drover-check")))
                    .isEmpty();
            assertThat(hanging.interrupted.get()).isEqualTo(1);
            assertThatThrownBy(() -> real.probe(ALLOC, NO_EXEC, List.of(tcp), listener))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("closed");
        }
        assertThat(results.stream().map(g -> g.result().status())).doesNotContain(CRITICAL);
    }
}
