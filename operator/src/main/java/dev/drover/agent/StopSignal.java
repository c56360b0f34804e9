package dev.drover.agent;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import sun.misc.Signal;

/**
 * SIGTERM (the kubelet stopping a pod) and SIGINT (Ctrl-C) as an orderly stop:
 * the handlers replace the JVM's default (exit code 143 after the shutdown
 * hooks), so the command can close what it runs and exit 0.
 */
public final class StopSignal {

    private final CompletableFuture<Void> stop = new CompletableFuture<>();

    private StopSignal() {}

    /** Installs the handlers now, so a signal that comes before {@link #await()} is not lost. */
    public static StopSignal install() {
        StopSignal s = new StopSignal();
        Signal.handle(new Signal("TERM"), sig -> s.stop.complete(null));
        Signal.handle(new Signal("INT"), sig -> s.stop.complete(null));
        return s;
    }

    /** Completes when a stop signal has come: what waits for something else can wait for this too. */
    public CompletableFuture<Void> stopped() {
        return stop;
    }

    /** Blocks until a stop signal has come; an interrupt ends the wait too. */
    public void await() {
        try {
            stop.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException impossible) {
            throw new IllegalStateException(impossible);
        }
    }
}
