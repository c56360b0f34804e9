package dev.drover.controller;

import dev.drover.concurrent.Worker;
import dev.drover.state.AllocId;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Bounds how many new allocations the agent takes on at once. Taking one on
 * costs CPU and a few durable writes; when hundreds arrive together (a node's
 * allocations created in one go), taking them all at once makes every one of
 * them slow to start, and their threads park deep and hold memory while they
 * wait. The gate admits up to {@code limit}, in the order they came; the rest
 * wait, not yet taken on. A slot is freed when its allocation leaves
 * {@code Pending} (running, or terminal), when it is deleted, or after
 * {@code hold} at the latest, so an allocation that waits on something outside
 * (a previous allocation, a long prestart task) holds the others back for no
 * longer than that. One admitted at once is started by the caller (the watch's
 * reconcile thread); one admitted from the queue, on a virtual thread of its own.
 */
final class StartGate implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(StartGate.class);

    private final int limit;
    private final long holdNanos;
    private final Deque<Waiting> queue = new ArrayDeque<>();
    /** Admitted and not yet released, with when each was admitted (nanoTime). */
    private final Map<AllocId, Long> admitted = new HashMap<>();

    private final ExecutorService starters = Executors.newThreadPerTaskExecutor(
            Thread.ofVirtual().name("drover-start-", 0).factory());
    private final Worker expirer;
    private boolean closed;

    /** @param since when it began to wait (nanoTime) */
    private record Waiting(AllocId id, Runnable start, long since) {}

    /**
     * @param limit allocations taken on at once; 0 takes every one on as it comes
     * @param hold  the longest one allocation keeps its slot
     */
    StartGate(int limit, Duration hold) {
        this.limit = limit;
        this.holdNanos = hold.toNanos();
        long tick = Math.max(TimeUnit.MILLISECONDS.toNanos(10), holdNanos / 4);
        this.expirer = Worker.startVirtual("drover-start-gate", self -> {
            TimeUnit.NANOSECONDS.sleep(tick);
            expire();
        });
    }

    /**
     * Takes {@code id} on now if a slot is free and nothing waits before it: then the caller starts it and this
     * returns true. Else {@code start} runs on a starter thread of the gate's when a slot frees up. An allocation
     * already admitted or waiting is not added twice (false).
     */
    synchronized boolean admitOrQueue(AllocId id, Runnable start) {
        if (closed || admitted.containsKey(id) || isWaiting(id)) {
            return false;
        }
        if (queue.isEmpty() && (limit <= 0 || admitted.size() < limit)) {
            admitted.put(id, System.nanoTime());
            return true;
        }
        queue.addLast(new Waiting(id, start, System.nanoTime()));
        return false;
    }

    /** {@code id} is running, terminal or gone: its slot goes to the next one waiting. */
    synchronized void release(AllocId id) {
        if (admitted.remove(id) != null) {
            admitNext();
        }
    }

    /** {@code id} was deleted: it leaves the queue, or frees its slot. */
    synchronized void cancel(AllocId id) {
        queue.removeIf(w -> w.id().equals(id));
        release(id);
    }

    /** Allocations waiting to be taken on. */
    synchronized int waiting() {
        return queue.size();
    }

    /** How long the allocation that waits longest has waited; zero when none waits. */
    synchronized Duration longestWait() {
        Waiting first = queue.peekFirst(); // taken on in the order they came: the first waits longest
        return first == null ? Duration.ZERO : Duration.ofNanos(System.nanoTime() - first.since());
    }

    private boolean isWaiting(AllocId id) {
        for (Waiting w : queue) {
            if (w.id().equals(id)) {
                return true;
            }
        }
        return false;
    }

    private void admitNext() {
        while (!closed && !queue.isEmpty() && (limit <= 0 || admitted.size() < limit)) {
            Waiting next = queue.removeFirst();
            admitted.put(next.id(), System.nanoTime());
            try {
                starters.execute(next.start());
            } catch (RejectedExecutionException closing) {
                return;
            }
        }
    }

    /** Frees the slots held longer than the hold time. */
    private synchronized void expire() {
        long now = System.nanoTime();
        boolean freed = false;
        for (Iterator<Long> it = admitted.values().iterator(); it.hasNext(); ) {
            if (now - it.next() >= holdNanos) {
                it.remove();
                freed = true;
            }
        }
        if (freed) {
            admitNext();
        }
    }

    /**
     * Drops what waits (the API server still has it: the next agent takes it on) and joins every thread, starts
     * under way included.
     */
    @Override
    public void close() {
        synchronized (this) {
            closed = true;
            if (!queue.isEmpty()) {
                LOG.info("{} allocation(s) not yet taken on are left for the next agent", queue.size());
            }
            queue.clear();
        }
        expirer.close();
        starters.close();
    }
}
