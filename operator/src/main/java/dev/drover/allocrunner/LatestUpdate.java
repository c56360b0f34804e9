package dev.drover.allocrunner;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Hands updates of an allocation to its runner, latest wins: an update older
 * than the newest seen (lower {@code metadata.generation}) is dropped, and
 * updates that arrive while the runner is busy collapse into the newest, so a
 * slow runner sees the newest spec, never a backlog.
 */
public final class LatestUpdate<T> {

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private long newest;
    private long taken;
    private T value;

    /** @param current the generation already being acted on: only newer updates are taken */
    public LatestUpdate(long current) {
        this.newest = current;
        this.taken = current;
    }

    /** Offers {@code update} of {@code generation}; returns false when it was stale and dropped. */
    public boolean offer(long generation, T update) {
        lock.lock();
        try {
            if (generation <= newest) {
                return false;
            }
            newest = generation;
            value = update;
            changed.signalAll();
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** The newest update not taken yet, waiting at most {@code timeout}; empty if none came. */
    public Optional<T> take(Duration timeout) throws InterruptedException {
        long nanos = timeout.toNanos();
        lock.lock();
        try {
            while (newest <= taken) {
                if (nanos <= 0) {
                    return Optional.empty();
                }
                nanos = changed.awaitNanos(nanos);
            }
            taken = newest;
            return Optional.of(value);
        } finally {
            lock.unlock();
        }
    }

    /** The generation of the newest update offered. */
    public long newestGeneration() {
        lock.lock();
        try {
            return newest;
        } finally {
            lock.unlock();
        }
    }
}
