package dev.drover.taskrunner.checks;

import dev.drover.api.v1alpha1.Check;

/**
 * One probe of one check: a request, a connection or a command, bounded by the check's {@code timeout}. A probe
 * never throws for what it finds (a refused connection, a failing command, a bad answer): each is a critical result
 * whose output says what happened.
 */
@FunctionalInterface
interface Probe {

    /**
     * Probes {@code check} of the task {@code target} reaches, now, within the check's timeout. Blocks the calling
     * (virtual) thread; gives way to an interrupt by throwing {@link InterruptedException} or returning soon.
     */
    ProbeResult run(Check check, CheckProber.Target target) throws InterruptedException;
}
