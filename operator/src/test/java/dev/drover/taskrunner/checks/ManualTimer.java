package dev.drover.taskrunner.checks;

import java.time.Duration;
import java.util.Comparator;
import java.util.PriorityQueue;

/** A {@link CheckTimer} whose time moves only when the test says; due actions run on the test's thread. */
final class ManualTimer implements CheckTimer {

    private record Entry(long at, long seq, Runnable action) {}

    private final PriorityQueue<Entry> queue =
            new PriorityQueue<>(Comparator.comparingLong(Entry::at).thenComparingLong(Entry::seq));
    private long now;
    private long seq;
    private boolean closed;

    @Override
    public synchronized long nanoTime() {
        return now;
    }

    @Override
    public synchronized Scheduled schedule(Runnable action, long delayNanos) {
        if (closed) {
            return () -> {};
        }
        Entry e = new Entry(now + Math.max(0, delayNanos), seq++, action);
        queue.add(e);
        return () -> {
            synchronized (this) {
                queue.remove(e);
            }
        };
    }

    /** Moves time on by {@code d}, running each action that falls due, in order, at its own time. */
    void advance(Duration d) {
        long until;
        synchronized (this) {
            until = now + d.toNanos();
        }
        while (true) {
            Entry next;
            synchronized (this) {
                next = queue.peek();
                if (next == null || next.at() > until) {
                    now = until;
                    return;
                }
                queue.poll();
                now = Math.max(now, next.at());
            }
            next.action().run();
        }
    }

    /** Actions scheduled and not yet run. */
    synchronized int pending() {
        return queue.size();
    }

    /** Time since the start. */
    synchronized Duration elapsed() {
        return Duration.ofNanos(now);
    }

    @Override
    public synchronized void close() {
        closed = true;
        queue.clear();
    }
}
