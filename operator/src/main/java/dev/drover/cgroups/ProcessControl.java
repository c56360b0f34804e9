package dev.drover.cgroups;

import java.time.Duration;

/**
 * What the cgroup layer does to processes and time: killing a process and waiting. Production uses
 * {@link #system()}; tests pass one that plays the kernel's part on a fake cgroup tree.
 */
public interface ProcessControl {

    /** Sends SIGKILL to {@code pid}; nothing when it is gone already. */
    void kill(long pid);

    /** Waits {@code pause}, the poll interval while processes die. */
    void pause(Duration pause) throws InterruptedException;

    /** A monotonic clock in nanoseconds, for deadlines. */
    long nanoTime();

    /**
     * The real one. SIGKILL goes through {@link ProcessHandle#destroyForcibly()}, which needs no process per
     * signal (a {@code kill} command would fork once per PID, in a loop that runs while a fork bomb is being
     * stopped). It is the only signal the layer sends: the graceful signal of a stop goes to the task's own
     * process by its driver, and a cgroup is then ended whole with SIGKILL, for which ProcessHandle has a call;
     * other signals would need {@code kill(1)} and are not sent from here.
     */
    static ProcessControl system() {
        return new ProcessControl() {
            @Override
            public void kill(long pid) {
                if (pid != ProcessHandle.current().pid()) {
                    ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
                }
            }

            @Override
            public void pause(Duration pause) throws InterruptedException {
                Thread.sleep(pause);
            }

            @Override
            public long nanoTime() {
                return System.nanoTime();
            }
        };
    }
}
