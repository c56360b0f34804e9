package dev.drover.deviceplugin;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A counter that goes up whenever something a waiter cares about happened, and a wait for it bounded by a
 * deadline on a {@link PluginClock}. Plugins use it for "wait for a change or a timeout", and
 * {@link #awaitChange} is their {@link DevicePlugin#awaitChange}.
 */
public final class ChangeSignal {

    /** The plugin's fingerprint now; fails once the plugin is closed. */
    @FunctionalInterface
    public interface Snapshot {
        Fingerprint take() throws DevicePluginException, InterruptedException;
    }

    /**
     * The next time after {@code now} at which the fingerprint may change with no signal (a scripted window
     * opening, a GPU's quiet period ending); empty when only a signal changes it.
     */
    @FunctionalInterface
    public interface Timeline {
        Optional<Instant> nextChange(Instant now) throws DevicePluginException;
    }

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

    /**
     * {@link DevicePlugin#awaitChange} for a plugin whose fingerprint changes only when this signal fires (an
     * event, a close) or at the times {@code timeline} names: takes a snapshot, and until it differs from
     * {@code since} or {@code timeout} passes, sleeps to the next signal, named time or the deadline, whichever
     * comes first. The version is read before each snapshot, so a signal that comes while one is taken is not
     * slept through.
     */
    public Fingerprint awaitChange(Fingerprint since, Duration timeout, Snapshot snapshot, Timeline timeline)
            throws DevicePluginException, InterruptedException {
        if (since == null) {
            return snapshot.take();
        }
        Instant deadline = clock.now().plus(timeout);
        while (true) {
            long seen = version();
            Fingerprint now = snapshot.take();
            Instant t = clock.now();
            if (!now.equals(since) || !t.isBefore(deadline)) {
                return now;
            }
            await(
                    seen,
                    timeline.nextChange(t)
                            .filter(next -> next.isBefore(deadline))
                            .orElse(deadline));
        }
    }
}
