package dev.drover.taskrunner.checks;

import dev.drover.api.v1alpha1.Check;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The probes of one task's checks, scheduled by a {@link CheckScheduler}: each check's ticks on the scheduler's timer,
 * its probes on virtual threads, and the results handed to the task's listener one at a time.
 */
final class TaskProbing implements CheckProber.Probing {

    private static final Logger LOG = LoggerFactory.getLogger(TaskProbing.class);

    private final CheckScheduler scheduler;
    private final CheckProber.Target target;
    private final CheckProber.Listener listener;
    private final List<Schedule> schedules = new ArrayList<>();
    private final Queue<Delivery> mailbox = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean delivering = new AtomicBoolean();
    private volatile boolean closed;

    TaskProbing(
            CheckScheduler scheduler, CheckProber.Target target, List<Check> checks, CheckProber.Listener listener) {
        this.scheduler = scheduler;
        this.target = target;
        this.listener = listener;
        for (Check check : checks) {
            schedules.add(new Schedule(check));
        }
    }

    void start() {
        long now = scheduler.timer.nanoTime();
        for (Schedule s : schedules) {
            Duration first = s.check.effectiveInitialDelay().plus(scheduler.jitter.delay(s.interval));
            s.due = now + first.toNanos();
            s.next = scheduler.timer.schedule(() -> tick(s), first.toNanos());
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (Schedule s : schedules) {
            s.next.cancel();
            Run run = s.running;
            if (run != null) {
                run.abandon();
            }
        }
        mailbox.clear();
        scheduler.ended(this);
    }

    /** A check's probe is due (on the timer's thread): starts it, and schedules the next. */
    private void tick(Schedule s) {
        if (closed) {
            return;
        }
        launch(s);
        long now = scheduler.timer.nanoTime();
        long interval = s.interval.toNanos();
        s.due += interval;
        if (s.due <= now) { // the timer was late by an interval or more: go on from now, not in a burst
            s.due += ((now - s.due) / interval + 1) * interval;
        }
        s.next = scheduler.timer.schedule(() -> tick(s), s.due - now);
        if (closed) {
            s.next.cancel(); // closed while this tick ran
        }
    }

    private void launch(Schedule s) {
        Run previous = s.running;
        if (previous != null) {
            scheduler.countSkipped(previous.started);
            return;
        }
        Run run = new Run();
        s.running = run;
        scheduler.start(CheckScheduler.PROBE_THREAD_NAME, () -> probe(s, run));
    }

    /** One probe, on its own thread: waits for a slot, then probes within the check's timeout. */
    private void probe(Schedule s, Run run) {
        run.thread = Thread.currentThread();
        try {
            if (closed || !scheduler.takeSlot()) {
                return; // closed while it waited for a slot
            }
            try {
                run.started = true;
                probeInSlot(s.check, run);
            } finally {
                scheduler.releaseSlot();
            }
        } finally {
            s.running = null;
        }
    }

    private void probeInSlot(Check check, Run run) {
        Duration timeout = check.effectiveTimeout();
        run.watchdog = scheduler.timer.schedule(
                () -> {
                    if (run.settle()) {
                        run.thread.interrupt();
                        deliver(check, ProbeResult.critical(ProbeOutput.timedOut(timeout)));
                    }
                },
                timeout.toNanos());
        ProbeResult result;
        try {
            result = scheduler.probe.run(check, target);
        } catch (InterruptedException e) {
            result = null; // abandoned: timed out or closed, which said or needs no result
        } catch (RuntimeException | Error e) {
            LOG.warn("a probe of a health check failed", e);
            result = ProbeResult.critical("the probe failed: " + e);
        } finally {
            run.watchdog.cancel();
        }
        // Handed on before the slot is released, so that once no probe runs every result is in the mailbox.
        if (result != null && run.settle()) {
            deliver(check, result);
        }
    }

    private void deliver(Check check, ProbeResult result) {
        if (closed) {
            return;
        }
        mailbox.add(new Delivery(check, new ProbeResult(result.status(), ProbeOutput.clean(result.output()))));
        if (delivering.compareAndSet(false, true)) {
            scheduler.start(CheckScheduler.RESULT_THREAD_NAME, this::drain);
        }
    }

    /** Hands the mailbox's results to the listener, one at a time, until it is empty. */
    private void drain() {
        do {
            for (Delivery d = mailbox.poll(); d != null && !closed; d = mailbox.poll()) {
                try {
                    listener.result(d.check, d.result);
                } catch (RuntimeException e) {
                    LOG.warn("a health check's listener failed on a result", e);
                }
            }
            delivering.set(false);
            // A result added after the last poll but before the flag dropped found the flag still up: take it here.
        } while (!closed && !mailbox.isEmpty() && delivering.compareAndSet(false, true));
    }

    private record Delivery(Check check, ProbeResult result) {}

    /** A check's schedule; its fields are written on the timer's thread but {@link #running}. */
    private static final class Schedule {
        final Check check;
        final Duration interval;
        long due;
        volatile CheckTimer.Scheduled next = () -> {};
        volatile Run running;

        Schedule(Check check) {
            this.check = check;
            // Validated to be at least that; an interval of zero would spin the timer.
            Duration given = check.effectiveInterval();
            this.interval = given.compareTo(Check.MIN_INTERVAL) < 0 ? Check.MIN_INTERVAL : given;
        }
    }

    /** One probe waiting for a slot or under way: settled once, by its result, its timeout or its abandonment, whichever comes first. */
    private static final class Run {
        private final AtomicBoolean settled = new AtomicBoolean();
        volatile Thread thread;
        volatile CheckTimer.Scheduled watchdog;
        /** Whether it has its slot: before, it waits for one. */
        volatile boolean started;

        boolean settle() {
            return settled.compareAndSet(false, true);
        }

        void abandon() {
            settle();
            Thread t = thread;
            if (t != null) {
                t.interrupt();
            }
        }
    }
}
