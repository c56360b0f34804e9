package dev.drover.concurrent;

import java.lang.ref.WeakReference;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The virtual threads a runner (of a task, of an allocation) runs on, one at a time. While it only waits, the runner
 * keeps no thread: the current one ends ({@link #handingOff}), and whatever ends the wait (an exit, a kill, a change,
 * a shutdown) starts the next ({@link #handOff}), which first joins the one before. A parked virtual thread keeps its
 * stack on the heap, some kilobytes each, and an agent runs thousands of runners.
 */
public final class HandOffThreads {

    private final String name;
    /**
     * The thread running now; null before the first starts and once one ended (an ended thread is not kept: with its
     * name and continuation some hundred bytes, for each of thousands of runners).
     */
    private Thread current;
    /** The thread that ran last, once it let go of itself: it may still be ending, and {@link #join} waits for it. */
    private WeakReference<Thread> last;

    private boolean started;
    /** The current thread ends or ended to wait, and the next is not started yet. */
    private boolean handingOff;

    public HandOffThreads(String name) {
        this.name = name;
    }

    public synchronized boolean started() {
        return started;
    }

    /** Starts the first thread with {@code work}; false, starting nothing, when one was started before. */
    public synchronized boolean start(Runnable work) {
        if (started) {
            return false;
        }
        started = true;
        current = Thread.ofVirtual().name(name).unstarted(ending(work));
        current.start();
        return true;
    }

    /** Called on the current thread before it arranges for {@link #handOff} and ends. */
    public synchronized void handingOff() {
        handingOff = true;
    }

    /** Starts the next thread with {@code work}, after the current one (if it has not ended yet) has ended. */
    public synchronized void handOff(Runnable work) {
        // the next thread lets go of the one before once joined: threads that ended do not hold each other
        AtomicReference<Thread> before = new AtomicReference<>(current);
        current = Thread.ofVirtual().name(name).unstarted(ending(() -> {
            Thread previous = before.getAndSet(null);
            if (previous != null) {
                try {
                    previous.join();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            work.run();
        }));
        current.start();
        started = true;
        handingOff = false;
        notifyAll();
    }

    /** {@code work}, after which its thread, if still the current one, is let go of. */
    private Runnable ending(Runnable work) {
        return () -> {
            try {
                work.run();
            } finally {
                synchronized (this) {
                    if (current == Thread.currentThread()) {
                        current = null;
                        last = new WeakReference<>(Thread.currentThread()); // gone once collected: ended for sure
                    }
                }
            }
        };
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
                t = current != null ? current : last == null ? null : last.get();
            }
            if (t == null || t == joined) {
                return;
            }
            t.join();
            joined = t;
        }
    }
}
