package dev.drover.allocrunner;

import dev.drover.concurrent.HandOffThreads;
import java.util.concurrent.Semaphore;

/**
 * How the alloc runner's loop is woken (by its task runners, an update, a destroy, a shutdown). A wake finds the
 * loop's thread running and leaves it a permit, so another pass follows; or, when the loop had ended idle, it starts
 * the next thread ({@link HandOffThreads#handOff}) to resume it. The loop's last look for a permit and its going idle
 * happen under the same lock as a wake's look at whether it is idle, so no wake is lost between the two.
 */
final class LoopWakes {

    private final Semaphore permits = new Semaphore(0);
    private final HandOffThreads threads;
    /** What the next thread runs when a wake finds the loop idle. */
    private final Runnable resume;
    /** The loop had nothing to do: its thread ended, and the next wake starts one. Guarded by this. */
    private boolean idle;

    LoopWakes(HandOffThreads threads, Runnable resume) {
        this.threads = threads;
        this.resume = resume;
    }

    /** Wakes the loop: a pass follows, on its thread or on the next one if it had ended idle. */
    synchronized void wake() {
        if (!idle) {
            permits.release();
            return;
        }
        idle = false;
        threads.handOff(resume);
    }

    /**
     * Called by the loop after a pass: true when no wake came since the last (the loop is idle now, its thread ends,
     * and the next wake resumes it); false when one or more did, taken together for one more pass.
     */
    synchronized boolean idleUnlessWoken() {
        if (!permits.tryAcquire()) {
            idle = true;
            threads.handingOff();
            return true;
        }
        permits.drainPermits();
        return false;
    }
}
