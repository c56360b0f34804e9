package dev.drover.taskrunner.checks;

import dev.drover.api.v1alpha1.Check;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent's {@link CheckProber}: one thread ({@value #THREAD_NAME}) schedules every check of every task, and each
 * probe runs on a virtual thread of its own, at most {@code maxConcurrentProbes} at a time, and at most an
 * allocation's share of those for its tasks' probes ({@link ProbeSlots}).
 *
 * <p>Schedule: a check is first probed {@code initialDelay} after {@link #probe}, put off by a {@link Jitter} of up
 * to a tenth of its interval (so that the checks of all the tasks an agent reattaches to after a restart spread over
 * their intervals), then every {@code interval} at a fixed rate: from when the previous probe was due, not from when
 * it ended. A due time the timer missed by more than an interval (the machine slept) is skipped, not caught up.
 *
 * <p>Slots: a probe due while {@code maxConcurrentProbes} probes run, or while its allocation holds its share, waits
 * for a slot, on its virtual thread, and gets one in the order probes asked among those under their share, so that
 * under a lasting overload every check is still probed in turn rather than the same ones always losing, and one
 * allocation's hanging probes leave the others' share free. Its timeout counts from when it has its slot.
 *
 * <p>Skipped probes: a probe due while the same check's previous probe still runs or still waits for a slot is
 * skipped, so that neither a probe that ignores its timeout nor an overload piles up threads: each check has at most
 * one probe waiting or running. A skipped probe gives no result (it says nothing about the task) and is counted
 * ({@link #skippedBusy()}, {@link #skippedSaturated()}); one skipped because the previous still waited for a slot
 * makes the check stale ({@link CheckProber.Listener#stale}, {@link #staleChecks()}) until its next result.
 *
 * <p>Bounds: each probe is bounded by its check's {@code timeout}, and by {@link Check#MAX_TIMEOUT} for a spec
 * stored before that bound: at the timeout the probe is critical ("timed out after 2s") and its thread is interrupted
 * (a socket closed, a command killed), and whatever it finds later is dropped. Results of one task reach its
 * listener one at a time, in the order they came, on a virtual thread, never on the thread that called {@link #probe}
 * nor on the scheduling thread. Outputs are cleaned and cut ({@link ProbeOutput#clean}).
 */
public final class CheckScheduler implements CheckProber, ProbeRuntime {

    private static final Logger LOG = LoggerFactory.getLogger(CheckScheduler.class);

    /** The name of the scheduling thread. */
    public static final String THREAD_NAME = "drover-checks";
    /** The name of the virtual threads that run probes. */
    public static final String PROBE_THREAD_NAME = "drover-check-probe";
    /** The name of the virtual threads that hand results to listeners. */
    public static final String RESULT_THREAD_NAME = "drover-check-results";
    /** A default bound of probes at a time: 2000 checks every 10 s that answer within 300 ms need about 60. */
    public static final int DEFAULT_MAX_CONCURRENT_PROBES = 64;
    /** The most {@link #close()} waits for probes and listeners to end once interrupted. */
    static final Duration JOIN_BOUND = Duration.ofSeconds(5);

    final CheckTimer timer;
    final Jitter jitter;
    final Probe probe;
    private final ProbeSlots slots;
    private final Set<TaskProbing> probings = ConcurrentHashMap.newKeySet();
    private final Set<Thread> threads = ConcurrentHashMap.newKeySet();
    private final LongAdder skippedBusy = new LongAdder();
    private final LongAdder skippedSaturated = new LongAdder();
    private final AtomicInteger staleChecks = new AtomicInteger();
    private volatile boolean closed;

    /** A scheduler on its own thread, probing http, tcp and exec checks, at most {@code maxConcurrentProbes} at once. */
    public CheckScheduler(int maxConcurrentProbes) {
        this(CheckTimer.threaded(THREAD_NAME), Jitter.spread(), Probes.standard(), maxConcurrentProbes);
    }

    CheckScheduler(CheckTimer timer, Jitter jitter, Probe probe, int maxConcurrentProbes) {
        this.slots = new ProbeSlots(maxConcurrentProbes);
        this.timer = timer;
        this.jitter = jitter;
        this.probe = probe;
    }

    @Override
    public Probing probe(String allocation, Target target, List<Check> checks, Listener listener) {
        Objects.requireNonNull(allocation, "allocation");
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(listener, "listener");
        if (closed) {
            throw new IllegalStateException("the health check scheduler is closed");
        }
        TaskProbing probing = new TaskProbing(this, allocation, target, List.copyOf(checks), listener);
        slots.join(allocation);
        probings.add(probing);
        probing.start();
        if (closed) { // closed meanwhile: close() may not have seen this one
            probing.close();
        }
        return probing;
    }

    /** Probes skipped because the same check's previous probe still ran. */
    public long skippedBusy() {
        return skippedBusy.sum();
    }

    /** Probes skipped because the same check's previous probe still waited for a slot. */
    public long skippedSaturated() {
        return skippedSaturated.sum();
    }

    /** Checks whose latest probe could not run for lack of a slot, and which have had no result since, now. */
    public int staleChecks() {
        return staleChecks.get();
    }

    /** Probes running now. */
    public int runningProbes() {
        return slots.running();
    }

    /** The slots the probes of {@code allocation}'s tasks hold now. */
    int slotsHeldBy(String allocation) {
        return slots.heldBy(allocation);
    }

    /** The threads of probes (waiting or running) and of results being handed to listeners, now. */
    int liveThreads() {
        return threads.size();
    }

    /** Probes waiting for a slot now. */
    public int waitingProbes() {
        return slots.waiting();
    }

    /**
     * Stops every task's probes, ends the scheduling thread, and waits at most {@link #JOIN_BOUND} for the probes
     * and the listeners' calls under way, which are interrupted.
     */
    @Override
    public void close() {
        closed = true;
        for (TaskProbing probing : probings) {
            probing.close();
        }
        timer.close();
        long deadline = System.nanoTime() + JOIN_BOUND.toNanos();
        for (Thread thread : threads) {
            if (thread == Thread.currentThread()) {
                continue; // a listener closing the scheduler
            }
            thread.interrupt();
        }
        for (Thread thread : threads) {
            if (thread == Thread.currentThread()) {
                continue;
            }
            try {
                if (!thread.join(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())))) {
                    LOG.warn(
                            "a health check's thread {} did not stop within {} s; leaving it",
                            thread.getName(),
                            JOIN_BOUND.toSeconds());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    @Override
    public CheckTimer timer() {
        return timer;
    }

    @Override
    public Jitter jitter() {
        return jitter;
    }

    @Override
    public Probe probe() {
        return probe;
    }

    @Override
    public boolean takeSlot(String allocation) {
        return slots.take(allocation);
    }

    @Override
    public void releaseSlot(String allocation) {
        slots.release(allocation);
    }

    @Override
    public void countSkipped(boolean started) {
        (started ? skippedBusy : skippedSaturated).increment();
    }

    @Override
    public void staleChecks(int delta) {
        staleChecks.addAndGet(delta);
    }

    /** Starts {@code body} on a virtual thread named {@code name}, which {@link #close()} interrupts and waits for. */
    Thread start(String name, Runnable body) {
        Thread thread = Thread.ofVirtual().name(name).unstarted(() -> {
            try {
                body.run();
            } finally {
                threads.remove(Thread.currentThread());
            }
        });
        threads.add(thread);
        thread.start();
        return thread;
    }

    @Override
    public void startProbe(Runnable body) {
        start(PROBE_THREAD_NAME, body);
    }

    @Override
    public void startDelivery(Runnable body) {
        start(RESULT_THREAD_NAME, body);
    }

    @Override
    public void ended(Probing ended, String allocation) {
        if (probings.remove(ended)) {
            slots.leave(allocation);
        }
    }
}
