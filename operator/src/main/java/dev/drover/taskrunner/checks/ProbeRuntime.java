package dev.drover.taskrunner.checks;

/**
 * What one task's {@link TaskProbing} uses of the scheduler that runs it: the one timer, the jitter, the probes, the
 * bounded slots and the threads the scheduler stops at its close. An interface, so that the scheduler and its
 * probings do not depend on each other.
 */
interface ProbeRuntime {

    CheckTimer timer();

    Jitter jitter();

    Probe probe();

    /** Waits for a slot for a probe, in the order probes asked; false when interrupted (abandoned) meanwhile. */
    boolean takeSlot();

    void releaseSlot();

    /** Counts a probe skipped because the check's previous one still ran ({@code started}) or waited for a slot. */
    void countSkipped(boolean started);

    /** Starts a probe's body on a virtual thread the scheduler's close interrupts and waits for. */
    void startProbe(Runnable body);

    /** Starts the delivery of results to a listener, likewise. */
    void startDelivery(Runnable body);

    /** The probing {@code ended} is closed: the scheduler forgets it. */
    void ended(CheckProber.Probing ended);
}
