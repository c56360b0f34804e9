package dev.drover.controller.status;

import dev.drover.api.v1alpha1.AllocationStatus;
import dev.drover.api.v1alpha1.ClientStatus;
import dev.drover.concurrent.Worker;
import dev.drover.state.AllocId;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.PriorityQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes allocation statuses to the API server the way the kubelet writes pod
 * statuses: runners publish the latest status whenever it changes, and one
 * writer thread decides when to write. A change of {@code clientStatus} is
 * written at once, except to {@code Pending}, which waits {@link Timing#pendingDelay()} (200 ms) so that an
 * allocation whose tasks start within it is written once, as {@code Running}; other changes wait up to the batch
 * delay so that a burst of task events costs one write; a status identical to the one last written is
 * never written; a failed write is retried with back-off; and every resync
 * interval anything not yet written is tried again. Up to {@link #IN_FLIGHT}
 * writes are sent at once (never two for one allocation), so one slow round
 * trip does not hold every other allocation's status back. One allocation gets
 * at most one write per {@link Timing#minInterval()}, urgent or not: a task
 * restarting a hundred times a second costs the API server a few writes a
 * second, each of the newest status, so its counts stay exact.
 */
public final class StatusWriter implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(StatusWriter.class);
    /** Writes sent at once, each for a different allocation. */
    static final int IN_FLIGHT = 8;

    /** Where statuses go: the Kubernetes side patches the status subresource. */
    public interface Sink {
        void write(AllocId id, AllocationStatus status) throws Exception;
    }

    /**
     * Timing of the writer; {@link #DEFAULT} is what docs/semantics.md (Status writes) promises.
     *
     * @param pendingDelay how long a new {@code clientStatus} of {@code Pending} waits before it is written, so that
     *     the {@code Running} that usually follows within it replaces it (one write instead of two)
     */
    public record Timing(
            Duration batchDelay,
            Duration resync,
            Duration minBackoff,
            Duration maxBackoff,
            Duration minInterval,
            Duration pendingDelay) {
        /** At most 4 writes a second per allocation. */
        public static final Duration MIN_INTERVAL = Duration.ofMillis(250);
        /**
         * The longest a new {@code Pending} waits: within the ~200 ms in which docs/semantics.md#status-writes promises
         * a change of {@code clientStatus} is written.
         */
        public static final Duration PENDING_DELAY = Duration.ofMillis(200);

        public static final Timing DEFAULT = new Timing(
                Duration.ofSeconds(1), Duration.ofSeconds(10), Duration.ofMillis(200), Duration.ofSeconds(30));

        /** {@link #PENDING_DELAY}, or the batch delay if that is shorter. */
        public Timing(
                Duration batchDelay, Duration resync, Duration minBackoff, Duration maxBackoff, Duration minInterval) {
            this(batchDelay, resync, minBackoff, maxBackoff, minInterval, min(batchDelay, PENDING_DELAY));
        }

        public Timing(Duration batchDelay, Duration resync, Duration minBackoff, Duration maxBackoff) {
            this(batchDelay, resync, minBackoff, maxBackoff, MIN_INTERVAL);
        }

        private static Duration min(Duration a, Duration b) {
            return a.compareTo(b) <= 0 ? a : b;
        }
    }

    /**
     * One entry's due time as it was set; stale once the entry's {@code dueNanos} moved, it was sent or forgotten
     * (dropped as it comes to the head).
     */
    private record Due(long nanos, AllocId id, Entry entry) {}

    private static final class Entry {
        AllocationStatus latest;
        AllocationStatus written;
        long dueNanos = Long.MAX_VALUE;
        /** When the last write of it was sent (nanoTime); none yet: far enough back. */
        long sentNanos = Long.MIN_VALUE / 2;

        int failures;
        boolean inFlight;
        /**
         * {@link #written} is the API server's copy as the watch read it, cut to the bound, not a status published
         * here: a published one is compared with it cut too.
         */
        boolean writtenObserved;
    }

    /** One write handed to a sender: for {@code entry}, which a forget and a new publish may have replaced. */
    private record Job(AllocId id, Entry entry, AllocationStatus status) {}

    private final Sink sink;
    private final Timing timing;
    private final Map<AllocId, Entry> entries = new ConcurrentHashMap<>();
    /**
     * Due times, earliest first, so a dispatch costs O(log n) per write instead of a look at every allocation.
     * Guarded by {@link #lock}.
     */
    private final PriorityQueue<Due> queue = new PriorityQueue<>(Comparator.comparingLong(Due::nanos));

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition wake = lock.newCondition();
    private final LongAdder writes = new LongAdder();
    private final LongAdder skipped = new LongAdder();
    private final LongAdder failures = new LongAdder();
    private final Worker worker;
    /** The writes in flight run here, one virtual thread each. */
    private final ExecutorService senders = Executors.newThreadPerTaskExecutor(
            Thread.ofVirtual().name("drover-status-write-", 0).factory());
    /** Guarded by {@link #lock}. */
    private int inFlight;
    /** When anything not yet written is tried again (nanoTime); writer thread only. */
    private long nextResync;

    public StatusWriter(Sink sink, Timing timing) {
        this.sink = sink;
        this.timing = timing;
        this.nextResync = System.nanoTime() + timing.resync().toNanos();
        this.worker = Worker.startVirtual("drover-status-writer", self -> sendDue());
    }

    /**
     * The newest status of {@code id}; never blocks. It is cut to {@link StatusBound#MAX_BYTES} when it is written
     * (measuring it costs a serialization, and most published statuses are replaced before a write).
     */
    public void publish(AllocId id, AllocationStatus published) {
        AllocationStatus status = Objects.requireNonNull(published, "status");
        lock.lock();
        try {
            Entry e = entries.computeIfAbsent(id, k -> new Entry());
            if (e.writtenObserved && StatusBound.fit(status).equals(e.written)) {
                e.written = status; // once per allocation after an agent restart: from now on compared as published
                e.writtenObserved = false;
            }
            if (status.equals(e.written) && e.failures == 0 && !e.inFlight) {
                // back to what the API server already has: nothing to write, and nothing still pending (a write in
                // flight would leave the API server with what it sends: then this one is still to be written)
                e.latest = null;
                e.dueNanos = Long.MAX_VALUE;
                skipped.increment();
                return;
            }
            if (status.equals(e.latest)) {
                skipped.increment();
                return;
            }
            e.latest = status;
            long now = System.nanoTime();
            long due = Math.max(
                    now + delayNanos(e.written, status),
                    e.sentNanos + timing.minInterval().toNanos());
            if (due < e.dueNanos && e.failures == 0) {
                schedule(id, e, due);
            }
        } finally {
            lock.unlock();
        }
    }

    /** The API server's copy of {@code id} differs from what was written (e.g. edited by hand): write it again. */
    public void invalidate(AllocId id) {
        lock.lock();
        try {
            Entry e = entries.get(id);
            if (e != null && e.written != null) {
                e.latest = e.latest == null ? e.written : e.latest;
                e.written = null;
                schedule(id, e, System.nanoTime());
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * What the API server holds for {@code id} (read by the watch): if nothing was written yet, it
     * counts as written, so a runner rebuilt after an agent restart that publishes the same status
     * costs no write.
     */
    public void observed(AllocId id, AllocationStatus status) {
        if (status == null) {
            return;
        }
        lock.lock();
        try {
            Entry e = entries.computeIfAbsent(id, k -> new Entry());
            if (e.written == null && e.failures == 0) {
                if (e.latest != null && StatusBound.fit(e.latest).equals(status)) {
                    e.written = e.latest;
                    e.latest = null;
                    e.dueNanos = Long.MAX_VALUE;
                } else {
                    e.written = status;
                    e.writtenObserved = true;
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * {@code observed}, the status the watch read for {@code id}, or an equal one this writer holds for it (the last
     * written, or the newest published, which may be the one in flight): the informer's cache then holds that one
     * instead of a copy of its own, which for a running allocation is almost always equal (the watch sends back what
     * was written). A status is never changed once it is published, so the two may share it.
     */
    public AllocationStatus sameAs(AllocId id, AllocationStatus observed) {
        Entry e = entries.get(id);
        if (e == null || observed == null) {
            return observed;
        }
        lock.lock();
        try {
            if (observed.equals(e.written)) {
                return e.written;
            }
            if (observed.equals(e.latest)) {
                return e.latest;
            }
            return observed;
        } finally {
            lock.unlock();
        }
    }

    /** Forget {@code id} (its allocation is gone); nothing more is written for it. */
    public void forget(AllocId id) {
        entries.remove(id);
    }

    /** Status writes sent to the API server. */
    public long writes() {
        return writes.sum();
    }

    /** Published statuses dropped because they were identical to what was pending or written. */
    public long skipped() {
        return skipped.sum();
    }

    /** Writes that failed (each is retried). */
    public long failures() {
        return failures.sum();
    }

    /** False once the writer thread has stopped. */
    public boolean alive() {
        return worker.alive();
    }

    /** Sets when {@code e} is due and tells the writer thread. Under {@link #lock}. */
    private void schedule(AllocId id, Entry e, long nanos) {
        e.dueNanos = nanos;
        queue.add(new Due(nanos, id, e));
        wake.signalAll();
    }

    /** Sends what is due, or waits until something is. */
    private void sendDue() throws InterruptedException {
        List<Job> jobs = new ArrayList<>();
        lock.lock();
        try {
            long now = System.nanoTime();
            if (now >= nextResync) {
                nextResync = now + timing.resync().toNanos();
                entries.forEach((id, e) -> {
                    if (e.latest != null && e.failures == 0 && e.dueNanos > now) {
                        schedule(id, e, now);
                    }
                });
            }
            while (inFlight + jobs.size() < IN_FLIGHT
                    && !queue.isEmpty()
                    && queue.peek().nanos() <= now) {
                Due due = queue.poll();
                Entry e = due.entry();
                if (e.latest == null || e.inFlight || e.dueNanos != due.nanos() || entries.get(due.id()) != e) {
                    continue; // stale: sent, rescheduled or forgotten since
                }
                e.inFlight = true;
                e.sentNanos = now;
                jobs.add(new Job(due.id(), e, e.latest));
            }
            if (jobs.isEmpty()) {
                long earliest = queue.isEmpty()
                        ? nextResync
                        : Math.min(nextResync, queue.peek().nanos());
                // a publish or a finished write wakes it sooner; with every write slot taken, only a finished write
                wake.awaitNanos(Math.max(1, (earliest <= now ? nextResync : earliest) - now));
                return;
            }
            inFlight += jobs.size();
        } finally {
            lock.unlock();
        }
        for (Job job : jobs) {
            try {
                senders.execute(() -> write(job));
            } catch (RejectedExecutionException closing) {
                return;
            }
        }
    }

    private void write(Job job) {
        AllocId id = job.id();
        AllocationStatus status = job.status();
        Throwable failure = null;
        try {
            sink.write(id, StatusBound.fit(status));
            writes.increment();
        } catch (Exception e) {
            failure = e;
        }
        lock.lock();
        try {
            inFlight--;
            wake.signalAll();
            Entry e = job.entry();
            if (entries.get(id) != e) {
                return; // forgotten meanwhile (and perhaps published afresh: that entry is not in flight)
            }
            e.inFlight = false;
            if (failure == null) {
                e.written = status;
                e.writtenObserved = false;
                e.failures = 0;
                if (e.latest == null || status.equals(e.latest)) {
                    e.latest = null;
                    e.dueNanos = Long.MAX_VALUE;
                } else {
                    // a newer status arrived meanwhile: it keeps the urgency it was published with
                    schedule(
                            id,
                            e,
                            Math.max(
                                    System.nanoTime() + delayNanos(status, e.latest),
                                    e.sentNanos + timing.minInterval().toNanos()));
                }
            } else {
                failures.increment();
                e.failures++;
                long backoff = Math.min(
                        timing.maxBackoff().toNanos(), timing.minBackoff().toNanos() << Math.min(20, e.failures - 1));
                schedule(id, e, System.nanoTime() + backoff);
                LOG.warn(
                        "writing the status of {} failed (attempt {}), retrying in {} ms: {}",
                        id,
                        e.failures,
                        TimeUnit.NANOSECONDS.toMillis(backoff),
                        failure.toString());
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * How long {@code next} waits after {@code written}: a new {@code clientStatus} none, but a new {@code Pending}
     * the pending delay (the {@code Running} that usually follows within it replaces it); any other change the batch
     * delay.
     */
    private long delayNanos(AllocationStatus written, AllocationStatus next) {
        if (written != null && written.getClientStatus() == next.getClientStatus()) {
            return timing.batchDelay().toNanos();
        }
        return next.getClientStatus() == ClientStatus.Pending
                ? timing.pendingDelay().toNanos()
                : 0;
    }

    /** Stops the writer thread and joins it and the writes in flight; pending statuses are not written. */
    @Override
    public void close() {
        worker.close();
        senders.close();
    }
}
