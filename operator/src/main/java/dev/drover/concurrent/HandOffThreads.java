package dev.drover.concurrent;

import java.util.concurrent.atomic.AtomicReference;

/**
 * The virtual threads a runner (of a task, of an allocation) runs on, one at a time. While it only waits, the runner
 * keeps no thread: the current one ends ({@link #handingOff}), and whatever ends the wait (an exit, a kill, a change,
 * a shutdown) starts the next ({@link #handOff}), which first joins the one before. A parked virtual thread keeps its
 * stack on the heap, some kilobytes each, and an agent runs thousands of runners.
 */
public final class HandOffThreads {

    private final String name;
    /** The current (or last) thread; null until the first starts. */
    private Thread current;
    /** The current thread ends or ended to wait, and the next is not started yet. */
    private boolean handingOff;

    public HandOffThreads(String name) {
        this.name = name;
    }

    public synchronized boolean started() {
        return current != null;
    }

    /** Starts the first thread with {@code work}; false, starting nothing, when one was started before. */
    public synchronized boolean start(Runnable work) {
        if (current != null) {
            return false;
        }
        current = Thread.ofVirtual().name(name).start(work);
        return true;
    }

    /** Called on the current thread before it arranges for {@link #handOff} and ends. */
    public synchronized void handingOff() {
        handingOff = true;
    }

    /** Starts the next thread with {@code work}, after the current one has ended. */
    public synchronized void handOff(Runnable work) {
        // the next thread lets go of the one before once joined: threads that ended do not hold each other
        AtomicReference<Thread> before = new AtomicReference<>(current);
        current = Thread.ofVirtual().name(name).start(() -> {
            try {
                before.getAndSet(null).join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            work.run();
        });
        handingOff = false;
        notifyAll();
    }

    /**
     * Waits until the threads have ended; the caller has made sure that any hand-off pending happens (the runner's
     * shutdown request ends every wait).
     */
    public void join() throws InterruptedException {
        Thread joined = null;
        while (true) {
            Thread t;
            synchronized (this) {
                while (handingOff) {
                    wait();
                }
                t = current;
            }
            if (t == null || t == joined) {
                return;
            }
            t.join();
            joined = t;
        }
    }
}
