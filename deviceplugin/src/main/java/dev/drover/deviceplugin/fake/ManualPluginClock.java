package dev.drover.deviceplugin.fake;

import dev.drover.deviceplugin.PluginClock;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/** A clock that moves only when told to; every timed wait on it wakes when it moves. For tests. */
public final class ManualPluginClock implements PluginClock {

    private final Set<Waiter> waiters = ConcurrentHashMap.newKeySet();
    private volatile Instant now;

    public ManualPluginClock(Instant start) {
        this.now = start;
    }

    @Override
    public Instant now() {
        return now;
    }

    /** Moves the clock forward and wakes every timed waiter so it can re-check its deadline. */
    public void advance(Duration by) {
        if (by.isNegative()) {
            throw new IllegalArgumentException("a clock does not go back: " + by);
        }
        synchronized (this) {
            now = now.plus(by);
        }
        for (Waiter w : waiters) {
            w.lock.lock();
            try {
                w.condition.signalAll();
            } finally {
                w.lock.unlock();
            }
        }
    }

    /** How many threads wait on this clock now; lets a test advance only once a waiter is in place. */
    public int waiters() {
        return waiters.size();
    }

    @Override
    public void await(ReentrantLock lock, Condition condition, Instant deadline) throws InterruptedException {
        Waiter waiter = new Waiter(lock, condition);
        // Registered before the time check: an advance after the check must find us to wake us.
        waiters.add(waiter);
        try {
            if (now.isBefore(deadline)) {
                condition.await();
            }
        } finally {
            waiters.remove(waiter);
        }
    }

    /** Identity matters: two threads waiting on the same condition are two waiters. */
    private static final class Waiter {
        final ReentrantLock lock;
        final Condition condition;

        Waiter(ReentrantLock lock, Condition condition) {
            this.lock = lock;
            this.condition = condition;
        }
    }
}
