package dev.drover.taskrunner.checks;

/**
 * What one task's {@link TaskProbing} uses of the scheduler that runs it: the one timer, the jitter, the probes, the
 * slots shared among allocations and the threads the scheduler stops at its close. An interface, so that the
 * scheduler and its probings do not depend on each other.
 */
interface ProbeRuntime {

    CheckTimer timer();

    Jitter jitter();

    Probe probe();

    /**
     * Waits for a slot for a probe of {@code allocation}, within its share, in the order probes asked; false when
     * interrupted (abandoned) meanwhile.
     */
    boolean takeSlot(String allocation);

    void releaseSlot(String allocation);

    /** Counts a probe skipped because the check's previous one still ran ({@code started}) or waited for a slot. */
    void countSkipped(boolean started);

    /** Checks became stale ({@code delta} > 0) or fresh again (< 0). */
    void staleChecks(int delta);

    /** Starts a probe's body on a virtual thread the scheduler's close interrupts and waits for. */
    void startProbe(Runnable body);

    /** Starts the delivery of results to a listener, likewise. */
    void startDelivery(Runnable body);

    /** The probing {@code ended}, of a task of {@code allocation}, is closed: the scheduler forgets it. */
    void ended(CheckProber.Probing ended, String allocation);
}
