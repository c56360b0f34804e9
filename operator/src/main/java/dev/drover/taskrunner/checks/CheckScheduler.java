package dev.drover.taskrunner.checks;

import dev.drover.api.v1alpha1.Check;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent's {@link CheckProber}: one thread ({@value #THREAD_NAME}) schedules every check of every task, and each
 * probe runs on a virtual thread of its own, at most {@code maxConcurrentProbes} at a time.
 *
 * <p>Schedule: a check is first probed {@code initialDelay} after {@link #probe}, put off by a {@link Jitter} of up
 * to a tenth of its interval (so that the checks of all the tasks an agent reattaches to after a restart spread over
 * their intervals), then every {@code interval} at a fixed rate: from when the previous probe was due, not from when
 * it ended. A due time the timer missed by more than an interval (the machine slept) is skipped, not caught up.
 *
 * <p>Slots: a probe due while {@code maxConcurrentProbes} probes run waits for a slot, on its virtual thread, and
 * gets one in the order probes asked (a fair semaphore), so that under a lasting overload every check is still
 * probed in turn rather than the same ones always losing. Its timeout counts from when it has its slot.
 *
 * <p>Skipped probes: a probe due while the same check's previous probe still runs or still waits for a slot is
 * skipped, so that neither a probe that ignores its timeout nor an overload piles up threads: each check has at most
 * one probe waiting or running. A skipped probe gives no result (it says nothing about the task) and is counted
 * ({@link #skippedBusy()}, {@link #skippedSaturated()}).
 *
 * <p>Bounds: each probe is bounded by its check's {@code timeout}: at the timeout the probe is critical ("timed out
 * after 2s") and its thread is interrupted (a socket closed, a command killed), and whatever it finds later is
 * dropped. Results of one task reach its listener one at a time, in the order they came, on a virtual thread, never
 * on the thread that called {@link #probe} nor on the scheduling thread. Outputs are cleaned and cut ({@link
 * ProbeOutput#clean}).
 */
public final class CheckScheduler implements CheckProber {

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
    private final int maxConcurrentProbes;
    private final Semaphore slots;
    private final Set<TaskProbing> probings = ConcurrentHashMap.newKeySet();
    private final Set<Thread> threads = ConcurrentHashMap.newKeySet();
    private final LongAdder skippedBusy = new LongAdder();
    private final LongAdder skippedSaturated = new LongAdder();
    private volatile boolean closed;

    /** A scheduler on its own thread, probing http, tcp and exec checks, at most {@code maxConcurrentProbes} at once. */
    public CheckScheduler(int maxConcurrentProbes) {
        this(CheckTimer.threaded(THREAD_NAME), Jitter.spread(), Probe.standard(), maxConcurrentProbes);
    }

    CheckScheduler(CheckTimer timer, Jitter jitter, Probe probe, int maxConcurrentProbes) {
        if (maxConcurrentProbes < 1) {
            throw new IllegalArgumentException(
                    "the most probes at a time must be at least 1, not " + maxConcurrentProbes);
        }
        this.timer = timer;
        this.jitter = jitter;
        this.probe = probe;
        this.maxConcurrentProbes = maxConcurrentProbes;
        this.slots = new Semaphore(maxConcurrentProbes, true); // fair: probes get slots in the order they asked
    }

    @Override
    public Probing probe(Target target, List<Check> checks, Listener listener) {
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(listener, "listener");
        if (closed) {
            throw new IllegalStateException("the health check scheduler is closed");
        }
        TaskProbing probing = new TaskProbing(this, target, List.copyOf(checks), listener);
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

    /** Probes running now. */
    public int runningProbes() {
        return maxConcurrentProbes - slots.availablePermits();
    }

    /** The threads of probes (waiting or running) and of results being handed to listeners, now. */
    int liveThreads() {
        return threads.size();
    }

    /** Probes waiting for a slot now, about. */
    public int waitingProbes() {
        return slots.getQueueLength();
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

    /** Waits for a slot for a probe, in the order probes asked; false when interrupted (abandoned) meanwhile. */
    boolean takeSlot() {
        try {
            slots.acquire();
            return true;
        } catch (InterruptedException e) {
            return false;
        }
    }

    void releaseSlot() {
        slots.release();
    }

    /** Counts a probe skipped because the check's previous one still ran ({@code started}) or waited for a slot. */
    void countSkipped(boolean started) {
        (started ? skippedBusy : skippedSaturated).increment();
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

    void ended(TaskProbing probing) {
        probings.remove(probing);
    }
}
