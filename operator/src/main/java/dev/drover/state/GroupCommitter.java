package dev.drover.state;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * Commits queued batches on one writer thread, sharing one transaction (and
 * so one sync) among all batches that queued while the previous commit ran.
 *
 * <p>A lone writer is committed at once. When the last transaction was shared
 * (writers are concurrent), the writer keeps the transaction open for as many
 * batches as it had then, applying each as it arrives, but never longer than
 * the last commit took nor {@link #MAX_GATHER}: on few cores, woken writers need
 * a moment to queue their next write, and without that wait each commit would
 * catch only one or two of them. Applying while waiting keeps the row work off
 * the path between the last arrival and the sync. Closing commits what is
 * queued, then joins the thread.
 */
final class GroupCommitter implements AutoCloseable {

    /** One transaction at a time, on the writer thread only. */
    interface Sink {
        void begin() throws Exception;

        /** Adds mutations to the open transaction. */
        void apply(List<Mutation> mutations) throws Exception;

        /** Commits the open transaction; returns only when it is durable. */
        void commit() throws Exception;

        /** Abandons the open transaction after a failure. */
        void rollback();
    }

    /** Caps one transaction so a burst cannot build an unbounded one. */
    private static final int MAX_GROUP = 1024;
    /** The most a write waits for company: a few ms at most, by design. */
    static final Duration MAX_GATHER = Duration.ofMillis(2);

    private final Sink sink;
    private final String storeName;
    private final LinkedBlockingQueue<Pending> queue = new LinkedBlockingQueue<>();
    /** Submitters share it, close() takes it alone: nothing is queued after the STOP marker. */
    private final ReentrantReadWriteLock lifecycle = new ReentrantReadWriteLock();

    private final Thread writer;
    private volatile boolean closed;
    // Writer thread only.
    private final List<Pending> group = new ArrayList<>();
    private final List<Pending> arrived = new ArrayList<>();
    private boolean stopping;
    private int lastGroupSize = 1;
    private long lastCommitNanos;

    GroupCommitter(String storeName, Sink sink) {
        this.sink = sink;
        this.storeName = storeName;
        // A platform thread: the commit blocks in native code (fsync), which would pin a virtual thread anyway.
        this.writer =
                Thread.ofPlatform().name("drover-state-writer").daemon(true).unstarted(this::run);
        writer.start();
    }

    CompletableFuture<Void> submit(List<Mutation> mutations) {
        Pending pending = new Pending(List.copyOf(mutations), new CompletableFuture<>());
        lifecycle.readLock().lock();
        try {
            if (closed) {
                throw new IllegalStateException("state store " + storeName + " is closed");
            }
            queue.add(pending);
        } finally {
            lifecycle.readLock().unlock();
        }
        return pending.done();
    }

    private void run() {
        while (!stopping) {
            try {
                arrived.add(queue.take());
            } catch (InterruptedException e) {
                // Only close() stops this thread, by a STOP marker; an interrupt from elsewhere is ignored.
                continue;
            }
            queue.drainTo(arrived, MAX_GROUP - 1);
            stopping |= dropStop(arrived);
            if (arrived.isEmpty()) {
                continue;
            }
            try {
                sink.begin();
                applyArrived();
                gather();
                long start = System.nanoTime();
                sink.commit();
                lastCommitNanos = System.nanoTime() - start;
                group.forEach(p -> p.done().complete(null));
            } catch (Throwable e) {
                // Throwable, not Exception: if this thread died of an Error, every writer would wait forever.
                sink.rollback();
                // Take in what had queued too, then give each batch its own transaction: one bad batch
                // must not fail the writers it happened to share a transaction with.
                group.addAll(arrived);
                arrived.clear();
                stopping |= dropStop(group);
                commitEachAlone(e);
            }
            lastGroupSize = Math.max(1, group.size());
            group.clear();
        }
    }

    /** Applies what has arrived to the open transaction and adds it to the group. */
    private void applyArrived() throws Exception {
        stopping |= dropStop(arrived);
        if (arrived.isEmpty()) {
            return;
        }
        List<Mutation> mutations = new ArrayList<>();
        for (Pending p : arrived) {
            mutations.addAll(p.mutations());
        }
        group.addAll(arrived);
        arrived.clear();
        sink.apply(mutations);
    }

    /** Waits briefly for the writers that shared the last transaction to queue again. */
    private void gather() throws Exception {
        long deadline = System.nanoTime() + Math.min(lastCommitNanos, MAX_GATHER.toNanos());
        while (group.size() < Math.min(lastGroupSize, MAX_GROUP) && !stopping) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return;
            }
            Pending next;
            try {
                next = queue.poll(left, TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                return;
            }
            if (next == null) {
                return;
            }
            arrived.add(next);
            queue.drainTo(arrived, MAX_GROUP - group.size() - 1);
            applyArrived();
        }
    }

    private void commitEachAlone(Throwable groupFailure) {
        if (group.isEmpty()) {
            return;
        }
        if (group.size() == 1) {
            group.getFirst().done().completeExceptionally(groupFailure);
            return;
        }
        for (Pending p : group) {
            try {
                sink.begin();
                sink.apply(p.mutations());
                sink.commit();
                p.done().complete(null);
            } catch (Throwable single) {
                sink.rollback();
                p.done().completeExceptionally(single);
            }
        }
    }

    /** STOP is always the last item ever queued; removes it and says whether it was there. */
    private static boolean dropStop(List<Pending> batches) {
        if (!batches.isEmpty() && batches.getLast() == Pending.STOP) {
            batches.removeLast();
            return true;
        }
        return false;
    }

    @Override
    public void close() {
        lifecycle.writeLock().lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            queue.add(Pending.STOP);
        } finally {
            lifecycle.writeLock().unlock();
        }
        boolean interrupted = false;
        while (true) {
            try {
                writer.join();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private record Pending(List<Mutation> mutations, CompletableFuture<Void> done) {
        static final Pending STOP = new Pending(List.of(), new CompletableFuture<>());
    }
}
