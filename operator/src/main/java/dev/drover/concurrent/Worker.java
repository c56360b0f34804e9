package dev.drover.concurrent;

import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A named background thread that runs one turn of work again and again until it is closed: the loop, the closed
 * flag and the shutdown that the agent's long-lived helpers (writers, watchers, collectors) each need once.
 *
 * <p>{@link #close()} marks it closed, interrupts the thread and joins it for at most {@link #JOIN_BOUND}: a turn
 * that ignores the interrupt longer is left running and said so, rather than holding the agent's shutdown. Closing
 * is idempotent and may be done by the worker's own turn (it then ends after that turn, without waiting for
 * itself). A turn ends the worker by throwing: {@link InterruptedException} quietly when closed, anything else
 * logged with the worker's name. A turn that must go on after a failure catches it itself.
 */
public final class Worker implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(Worker.class);
    /** The longest {@link #close()} waits for the thread. */
    public static final Duration JOIN_BOUND = Duration.ofSeconds(10);

    /** One pass of a worker's loop. */
    @FunctionalInterface
    public interface Turn {
        /**
         * Does one pass of work, blocking as long as it needs; {@code worker} tells whether it was closed meanwhile.
         * Blocking calls must give way to an interrupt: that is how {@link #close()} stops a turn.
         */
        void run(Worker worker) throws Exception;
    }

    private final Turn turn;
    private final Thread thread;
    private volatile boolean closed;

    private Worker(Thread.Builder builder, Turn turn) {
        this.turn = turn;
        this.thread = builder.unstarted(this::loop);
        thread.start();
    }

    /** Starts {@code turn} on a virtual thread named {@code name}. */
    public static Worker startVirtual(String name, Turn turn) {
        return new Worker(Thread.ofVirtual().name(name), turn);
    }

    /**
     * Starts {@code turn} on a daemon platform thread named {@code name}: for a turn that blocks in native code
     * (file system calls, fsync), which would pin a virtual thread's carrier.
     */
    public static Worker startPlatform(String name, Turn turn) {
        return new Worker(Thread.ofPlatform().name(name).daemon(true), turn);
    }

    private void loop() {
        try {
            while (!closed) {
                turn.run(this);
            }
        } catch (InterruptedException e) {
            if (!closed) {
                LOG.warn("{} was interrupted without being closed, and stops", thread.getName());
            }
        } catch (Throwable e) {
            // Throwable, not Exception: an Error would otherwise end the thread with nothing in the agent's log.
            LOG.error("{} failed and stops", thread.getName(), e);
        }
    }

    /** Whether {@link #close()} was called: a long turn checks it between its steps. */
    public boolean closed() {
        return closed;
    }

    /** False once the thread has ended: closed, or stopped by a failure of its turn. */
    public boolean alive() {
        return thread.isAlive();
    }

    /** Stops the worker and waits at most {@link #JOIN_BOUND} for its thread. */
    @Override
    public void close() {
        closeAll(List.of(this), JOIN_BOUND);
    }

    /**
     * Stops every one of {@code workers} at once (marks each closed and interrupts it before waiting for any), then
     * waits at most {@link #JOIN_BOUND} in all for their threads. Returns whether every thread has ended (false
     * too when the caller was interrupted while it waited; its interrupt is kept).
     */
    public static boolean closeAll(List<Worker> workers) {
        return closeAll(workers, JOIN_BOUND);
    }

    /** As {@link #closeAll(List)}, waiting at most {@code bound}; returns whether every thread has ended. */
    static boolean closeAll(List<Worker> workers, Duration bound) {
        for (Worker w : workers) {
            w.closed = true;
            if (w.thread != Thread.currentThread()) {
                w.thread.interrupt();
            }
        }
        long deadline = System.nanoTime() + bound.toNanos();
        boolean ended = true;
        for (Worker w : workers) {
            if (w.thread == Thread.currentThread()) {
                continue; // its own turn closes it: the loop ends when that turn returns
            }
            try {
                if (!w.thread.join(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())))) {
                    LOG.warn(
                            "{} did not stop within {} s of being closed; leaving it",
                            w.thread.getName(),
                            bound.toSeconds());
                    ended = false;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return ended;
    }
}
