package dev.drover.state;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Commits queued batches on one writer thread, sharing one transaction (and
 * so one sync) among all batches that queued while the previous commit ran.
 *
 * <p>No timer: a lone writer is committed at once, and the added latency for a
 * writer that arrives during a commit is at most that one commit. Closing
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

    private final Sink sink;
    private final String storeName;
    private final LinkedBlockingQueue<Pending> queue = new LinkedBlockingQueue<>();
    private final ReentrantLock lifecycle = new ReentrantLock();
    private final Thread writer;
    private boolean closed;

    GroupCommitter(String storeName, Sink sink) {
        this.sink = sink;
        this.storeName = storeName;
        // A platform thread: the commit blocks in native code (fsync), which would pin a virtual thread anyway.
        this.writer = Thread.ofPlatform().name("drover-state-writer").daemon(true).unstarted(this::run);
        writer.start();
    }

    CompletableFuture<Void> submit(List<Mutation> mutations) {
        Pending pending = new Pending(List.copyOf(mutations), new CompletableFuture<>());
        lifecycle.lock();
        try {
            if (closed) {
                throw new IllegalStateException("state store " + storeName + " is closed");
            }
            queue.add(pending);
        } finally {
            lifecycle.unlock();
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
            if (group.getLast() == Pending.STOP) {
                group.removeLast();
                stopping = true;
            }
            commit(group);
            group.clear();
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
        } catch (Exception e) {
            if (group.size() == 1) {
                group.getFirst().done().completeExceptionally(e);
                return;
            }
            // One bad batch must not fail the writers it happened to share a transaction with.
            for (Pending p : group) {
                try {
                    sink.commit(p.mutations());
                    p.done().complete(null);
                } catch (Exception single) {
                    p.done().completeExceptionally(single);
                }
            }
        }
    }

    @Override
    public void close() {
        lifecycle.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            queue.add(Pending.STOP);
        } finally {
            lifecycle.unlock();
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
