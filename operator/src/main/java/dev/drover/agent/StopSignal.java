package dev.drover.agent;

import java.util.concurrent.CountDownLatch;
import sun.misc.Signal;

/**
 * SIGTERM (the kubelet stopping a pod) and SIGINT (Ctrl-C) as an orderly stop:
 * the handlers replace the JVM's default (exit code 143 after the shutdown
 * hooks), so the command can close what it runs and exit 0.
 */
public final class StopSignal {

    private final CountDownLatch stop = new CountDownLatch(1);

    private StopSignal() {}

    /** Installs the handlers now, so a signal that comes before {@link #await()} is not lost. */
    public static StopSignal install() {
        StopSignal s = new StopSignal();
        Signal.handle(new Signal("TERM"), sig -> s.stop.countDown());
        Signal.handle(new Signal("INT"), sig -> s.stop.countDown());
        return s;
    }

    /** Blocks until a stop signal has come; an interrupt ends the wait too. */
    public void await() {
        try {
            stop.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
