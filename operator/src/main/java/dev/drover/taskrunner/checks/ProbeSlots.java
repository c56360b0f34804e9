package dev.drover.taskrunner.checks;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The agent's probe slots, shared fairly among the allocations whose tasks have checks: an allocation holds at most
 * {@link #share} of them at a time, {@code max(1, slots / (allocations + 1))}, so that one allocation's probes that
 * hang until their timeout cannot keep another's from running. A probe that asks for a slot gets one in the order
 * probes asked, among those whose allocation is under its share; the others wait on, in their place.
 *
 * <p>The share counts every allocation with checks, asking for slots or not: a share that grew whenever the others
 * were idle would let hanging probes take every slot between two of another allocation's probes, each of which would
 * then wait for one of theirs to time out. The one share more than there are allocations is kept for the allocation
 * that comes next (or whose task restarts): a share that shrinks only when it joins would find the others over their
 * new share, holding every slot until their probes time out. The cost: when every allocation's probes are slow, a
 * part of the slots stays free (half of them for one allocation alone, which is the allocation whose probes are
 * slow); and however many allocations there are, each may hold one.
 */
final class ProbeSlots {

    private final int total;
    private final ReentrantLock lock = new ReentrantLock();
    /** Allocation → its tasks whose checks are probed now. */
    private final Map<String, Integer> members = new HashMap<>();
    /** Allocation → the slots its probes hold now; absent when none. */
    private final Map<String, Integer> held = new HashMap<>();
    /** Probes waiting for a slot, in the order they asked. */
    private final ArrayDeque<Waiter> waiting = new ArrayDeque<>();

    private int inUse;

    ProbeSlots(int total) {
        if (total < 1) {
            throw new IllegalArgumentException("the most probes at a time must be at least 1, not " + total);
        }
        this.total = total;
    }

    /** The most slots one of {@code allocations} allocations with checks may hold at a time, out of {@code slots}. */
    static int share(int slots, int allocations) {
        return Math.max(1, slots / (Math.max(0, allocations) + 1));
    }

    /** A probe waiting for a slot; {@code granted} is set, under the lock, when it has one. */
    private static final class Waiter {
        final String allocation;
        final Condition signal;
        boolean granted;

        Waiter(String allocation, Condition signal) {
            this.allocation = allocation;
            this.signal = signal;
        }
    }

    /** A task of {@code allocation} has begun to have its checks probed: the allocation counts for the share. */
    void join(String allocation) {
        lock.lock();
        try {
            members.merge(allocation, 1, Integer::sum);
        } finally {
            lock.unlock();
        }
    }

    /** A task of {@code allocation} no longer has its checks probed; the others' share may grow. */
    void leave(String allocation) {
        lock.lock();
        try {
            members.computeIfPresent(allocation, (a, n) -> n == 1 ? null : n - 1);
            grant();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits for a slot for a probe of {@code allocation}; false when interrupted (abandoned) meanwhile, and then it
     * holds none.
     */
    boolean take(String allocation) {
        lock.lock();
        try {
            Waiter w = new Waiter(allocation, lock.newCondition());
            waiting.add(w);
            grant();
            while (!w.granted) {
                try {
                    w.signal.await();
                } catch (InterruptedException e) {
                    if (w.granted) {
                        releaseLocked(allocation); // granted as it was interrupted: passed on
                    } else {
                        waiting.remove(w);
                    }
                    return false;
                }
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** Gives back a slot {@link #take} gave a probe of {@code allocation}. */
    void release(String allocation) {
        lock.lock();
        try {
            releaseLocked(allocation);
        } finally {
            lock.unlock();
        }
    }

    private void releaseLocked(String allocation) {
        held.computeIfPresent(allocation, (a, n) -> n == 1 ? null : n - 1);
        inUse--;
        grant();
    }

    /** Hands free slots to the longest-waiting probes whose allocation is under its share. */
    private void grant() {
        int share = share(total, members.size());
        for (Iterator<Waiter> it = waiting.iterator(); inUse < total && it.hasNext(); ) {
            Waiter w = it.next();
            if (held.getOrDefault(w.allocation, 0) < share) {
                it.remove();
                held.merge(w.allocation, 1, Integer::sum);
                inUse++;
                w.granted = true;
                w.signal.signal();
            }
        }
    }

    /** Slots held now. */
    int running() {
        lock.lock();
        try {
            return inUse;
        } finally {
            lock.unlock();
        }
    }

    /** Probes waiting for a slot now. */
    int waiting() {
        lock.lock();
        try {
            return waiting.size();
        } finally {
            lock.unlock();
        }
    }

    /** The slots the probes of {@code allocation} hold now. */
    int heldBy(String allocation) {
        lock.lock();
        try {
            return held.getOrDefault(allocation, 0);
        } finally {
            lock.unlock();
        }
    }
}
