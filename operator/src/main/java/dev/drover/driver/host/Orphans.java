package dev.drover.driver.host;

import dev.drover.driver.ExitResult;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Tasks whose supervisor died while they ran on. Nobody waits for such a task any more (its parent is gone), so
 * its end is learnt by watching {@code /proc} for its PID and start time, one virtual thread per task; its exit
 * code is lost with the supervisor.
 */
final class Orphans implements AutoCloseable {

    private static final Duration POLL = Duration.ofMillis(100);

    private final Set<Thread> watchers = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    /** Completes once the process {@code pid} that started at {@code startTime} is gone. */
    CompletableFuture<ExitResult> watch(long pid, long startTime) {
        CompletableFuture<ExitResult> exit = new CompletableFuture<>();
        Thread watcher = Thread.ofVirtual()
                .name("drover-raw-exec-orphan-" + pid)
                .unstarted(() -> {
                    try {
                        while (!closed && Procs.isSame(pid, startTime)) {
                            Thread.sleep(POLL);
                        }
                        if (!closed) {
                            exit.complete(new ExitResult(
                                    -1,
                                    null,
                                    "the task (pid " + pid + ") ended after its supervisor"
                                            + " died, so its exit status is unknown"));
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    } finally {
                        watchers.remove(Thread.currentThread());
                    }
                });
        watchers.add(watcher);
        watcher.start();
        return exit;
    }

    /** Stops watching; the tasks run on (a later agent takes them over again). */
    @Override
    public void close() {
        closed = true;
        for (Thread t : watchers) {
            t.interrupt();
        }
        for (Thread t : watchers) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
