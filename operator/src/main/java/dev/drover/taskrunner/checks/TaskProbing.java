package dev.drover.taskrunner.checks;

import dev.drover.api.v1alpha1.Check;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The probes of one task's checks, scheduled by a {@link ProbeRuntime} (the {@code CheckScheduler}): each check's
 * ticks on the scheduler's timer, its probes on virtual threads in the slots of its allocation's share, and the
 * results handed to the task's listener one at a time. A tick that finds the check's previous probe still waiting
 * for a slot tells the listener the check is stale; its next result makes it fresh again.
 */
final class TaskProbing implements CheckProber.Probing {

    private static final Logger LOG = LoggerFactory.getLogger(TaskProbing.class);

    private final ProbeRuntime scheduler;
    private final String allocation;
    private final CheckProber.Target target;
    private final CheckProber.Listener listener;
    private final List<Schedule> schedules = new ArrayList<>();
    private final Queue<Consumer<CheckProber.Listener>> mailbox = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean delivering = new AtomicBoolean();
    private volatile boolean closed;

    TaskProbing(
            ProbeRuntime scheduler,
            String allocation,
            CheckProber.Target target,
            List<Check> checks,
            CheckProber.Listener listener) {
        this.scheduler = scheduler;
        this.allocation = allocation;
        this.target = target;
        this.listener = listener;
        for (Check check : checks) {
            schedules.add(new Schedule(check));
        }
    }

    void start() {
        long now = scheduler.timer().nanoTime();
        for (Schedule s : schedules) {
            Duration first =
                    s.check.effectiveInitialDelay().plus(scheduler.jitter().delay(s.interval));
            s.due = now + first.toNanos();
            s.next = scheduler.timer().schedule(() -> tick(s), first.toNanos());
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
            s.fresh(scheduler);
        }
        mailbox.clear();
        scheduler.ended(this, allocation);
    }

    /** A check's probe is due (on the timer's thread): starts it, and schedules the next. */
    private void tick(Schedule s) {
        if (closed) {
            return;
        }
        launch(s);
        long now = scheduler.timer().nanoTime();
        long interval = s.interval.toNanos();
        s.due += interval;
        if (s.due <= now) { // the timer was late by an interval or more: go on from now, not in a burst
            s.due += ((now - s.due) / interval + 1) * interval;
        }
        s.next = scheduler.timer().schedule(() -> tick(s), s.due - now);
        if (closed) {
            s.next.cancel(); // closed while this tick ran
        }
    }

    private void launch(Schedule s) {
        Run previous = s.running;
        if (previous != null) {
            scheduler.countSkipped(previous.started);
            if (!previous.started && s.stale.compareAndSet(false, true)) {
                scheduler.staleChecks(1);
                if (closed) {
                    s.fresh(scheduler); // closed while this tick ran: close() may have missed it
                } else {
                    post(l -> l.stale(s.check));
                }
            }
            return;
        }
        Run run = new Run();
        s.running = run;
        scheduler.startProbe(() -> probe(s, run));
    }

    /** One probe, on its own thread: waits for a slot, then probes within the check's timeout. */
    private void probe(Schedule s, Run run) {
        run.thread = Thread.currentThread();
        try {
            if (closed || !scheduler.takeSlot(allocation)) {
                return; // closed while it waited for a slot
            }
            try {
                run.started = true;
                probeInSlot(s, run);
            } finally {
                scheduler.releaseSlot(allocation);
            }
        } finally {
            s.running = null;
        }
    }

    private void probeInSlot(Schedule s, Run run) {
        Check check = s.check;
        // Validated to be at most that; a spec stored before the bound still holds its slot no longer.
        Duration timeout = check.effectiveTimeout().compareTo(Check.MAX_TIMEOUT) > 0
                ? Check.MAX_TIMEOUT
                : check.effectiveTimeout();
        run.watchdog = scheduler
                .timer()
                .schedule(
                        () -> {
                            if (run.settle()) {
                                run.thread.interrupt();
                                deliver(s, ProbeResult.critical(ProbeOutput.timedOut(timeout)));
                            }
                        },
                        timeout.toNanos());
        ProbeResult result;
        try {
            result = scheduler.probe().run(check, target);
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
            deliver(s, result);
        }
    }

    private void deliver(Schedule s, ProbeResult result) {
        s.fresh(scheduler);
        ProbeResult cleaned = new ProbeResult(result.status(), ProbeOutput.clean(result.output()));
        post(l -> l.result(s.check, cleaned));
    }

    /** Hands {@code call} to the listener after the calls posted before it. */
    private void post(Consumer<CheckProber.Listener> call) {
        if (closed) {
            return;
        }
        mailbox.add(call);
        if (delivering.compareAndSet(false, true)) {
            scheduler.startDelivery(this::drain);
        }
    }

    /** Hands the mailbox's results to the listener, one at a time, until it is empty. */
    private void drain() {
        do {
            for (Consumer<CheckProber.Listener> call = mailbox.poll(); call != null && !closed; call = mailbox.poll()) {
                try {
                    call.accept(listener);
                } catch (RuntimeException e) {
                    LOG.warn("a health check's listener failed", e);
                }
            }
            delivering.set(false);
            // A result added after the last poll but before the flag dropped found the flag still up: take it here.
        } while (!closed && !mailbox.isEmpty() && delivering.compareAndSet(false, true));
    }

    /** A check's schedule; its fields are written on the timer's thread but {@link #running}. */
    private static final class Schedule {
        final Check check;
        final Duration interval;
        long due;
        volatile CheckTimer.Scheduled next = () -> {};
        volatile Run running;
        /** Whether the listener was told the check is stale, and no result came since. */
        final AtomicBoolean stale = new AtomicBoolean();

        Schedule(Check check) {
            this.check = check;
            // Validated to be at least that; an interval of zero would spin the timer.
            Duration given = check.effectiveInterval();
            this.interval = given.compareTo(Check.MIN_INTERVAL) < 0 ? Check.MIN_INTERVAL : given;
        }

        /** The check is stale no more: a result came, or its probing ended. */
        void fresh(ProbeRuntime scheduler) {
            if (stale.compareAndSet(true, false)) {
                scheduler.staleChecks(-1);
            }
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
