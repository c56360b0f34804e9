package dev.drover.bench;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * While open, a bench stopped from outside (SIGTERM, SIGINT to its process alone) first ends the processes it
 * started: its light JVM, the local API server, the agent and any task the agent left. A JVM that exits on a signal
 * runs its shutdown hooks but no {@code finally} block, and without this an API server and an agent outlived the
 * bench, holding their ports and data directory.
 */
final class ChildrenOnExit implements AutoCloseable {

    /** How long the children are given to end when asked before they are killed. */
    static final Duration WAIT = Duration.ofSeconds(20);

    private final Thread hook = new Thread(ChildrenOnExit::end, "bench-children-on-exit");

    ChildrenOnExit() {
        Runtime.getRuntime().addShutdownHook(hook);
    }

    /** Asks every descendant of this JVM to end, waits at most {@link #WAIT}, then kills those still there. */
    static void end() {
        List<ProcessHandle> children = ProcessHandle.current().descendants().toList();
        children.forEach(ProcessHandle::destroy);
        long deadline = System.nanoTime() + WAIT.toNanos();
        for (ProcessHandle child : children) {
            try {
                child.onExit().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (TimeoutException | ExecutionException e) {
                child.destroyForcibly();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                child.destroyForcibly();
            }
        }
    }

    @Override
    public void close() {
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // the hook is running or has run
        }
    }
}
