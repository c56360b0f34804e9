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
 * (writers are concurrent), the writer thread waits for as many batches as it
 * had then, but never longer than the last commit took nor {@link #MAX_GATHER}:
 * on few cores, woken writers need a moment to queue their next write, and
 * without that wait each commit would catch only one or two of them. Closing
 * commits what is queued, then joins the thread.
 */
final class GroupCommitter implements AutoCloseable {

    /** Writes all mutations in one transaction; returns only when they are durable. */
    @FunctionalInterface
    interface Sink {
        void commit(List<Mutation> mutations) throws Exception;
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
    private int lastGroupSize = 1;
    private long lastCommitNanos;

    GroupCommitter(String storeName, Sink sink) {
        this.sink = sink;
        this.storeName = storeName;
        // A platform thread: the commit blocks in native code (fsync), which would pin a virtual thread anyway.
        this.writer = Thread.ofPlatform().name("drover-state-writer").daemon(true).unstarted(this::run);
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
        List<Pending> group = new ArrayList<>();
        boolean stopping = false;
        while (!stopping) {
            try {
                group.add(queue.take());
            } catch (InterruptedException e) {
                // Only close() stops this thread, by a STOP marker; an interrupt from elsewhere is ignored.
                continue;
            }
            queue.drainTo(group, MAX_GROUP - 1);
            gather(group);
            if (group.getLast() == Pending.STOP) {
                group.removeLast();
                stopping = true;
            }
            long start = System.nanoTime();
            commit(group);
            lastCommitNanos = System.nanoTime() - start;
            lastGroupSize = Math.max(1, group.size());
            group.clear();
        }
    }

    /** Waits briefly for the writers that shared the last transaction to queue again. */
    private void gather(List<Pending> group) {
        int expected = lastGroupSize;
        long deadline = System.nanoTime() + Math.min(lastCommitNanos, MAX_GATHER.toNanos());
        while (group.size() < expected && group.getLast() != Pending.STOP) {
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
            group.add(next);
            queue.drainTo(group, MAX_GROUP - group.size());
        }
    }

    private void commit(List<Pending> group) {
        if (group.isEmpty()) {
            return;
        }
        List<Mutation> all = new ArrayList<>();
        for (Pending p : group) {
            all.addAll(p.mutations());
        }
        try {
            sink.commit(all);
            group.forEach(p -> p.done().complete(null));
        } catch (Throwable e) {
            // Throwable, not Exception: if this thread died of an Error, every writer would wait forever.
            if (group.size() == 1) {
                group.getFirst().done().completeExceptionally(e);
                return;
            }
            // One bad batch must not fail the writers it happened to share a transaction with.
            for (Pending p : group) {
                try {
                    sink.commit(p.mutations());
                    p.done().complete(null);
                } catch (Throwable single) {
                    p.done().completeExceptionally(single);
                }
            }
        }
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
