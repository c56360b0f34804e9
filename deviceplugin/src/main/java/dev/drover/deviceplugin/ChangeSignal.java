package dev.drover.deviceplugin;

import java.time.Instant;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A counter that goes up whenever something a waiter cares about happened, and a wait for it bounded by a
 * deadline on a {@link PluginClock}. Plugins use it for "wait for a change or a timeout".
 */
public final class ChangeSignal {

    private final PluginClock clock;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private long version;

    public ChangeSignal(PluginClock clock) {
        this.clock = clock;
    }

    public long version() {
        lock.lock();
        try {
            return version;
        } finally {
            lock.unlock();
        }
    }

    /** Wakes every waiter. */
    public void signal() {
        lock.lock();
        try {
            version++;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits until the version differs from {@code seen} or the clock reaches {@code deadline}; returns the
     * version then.
     */
    public long await(long seen, Instant deadline) throws InterruptedException {
        lock.lock();
        try {
            while (version == seen && clock.now().isBefore(deadline)) {
                clock.await(lock, changed, deadline);
            }
            return version;
        } finally {
            lock.unlock();
        }
    }
}
