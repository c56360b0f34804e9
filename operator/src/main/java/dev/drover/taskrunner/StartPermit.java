package dev.drover.taskrunner;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * When a task runner may start its task: at once, or, for one rebuilt from the store after an agent restart, once
 * the API server confirmed its allocation. A reattached task is supervised meanwhile; only starts (a first one, one
 * after a failed reattach, a restart) wait, and a kill or a shutdown ends the wait.
 */
final class StartPermit {

    private volatile CompletableFuture<?> permit = CompletableFuture.completedFuture(null);

    /** Starts wait for {@code after} from now on. */
    void after(CompletableFuture<?> after) {
        permit = after;
    }

    /** Waits for the permit, {@code kill} or {@code shutdown}; false when the shutdown came without either. */
    boolean await(CompletableFuture<?> kill, CompletableFuture<?> shutdown) throws InterruptedException {
        CompletableFuture<?> p = permit;
        if (!p.isDone()) {
            try {
                CompletableFuture.anyOf(p, kill, shutdown).get();
            } catch (ExecutionException e) {
                // none of them completes exceptionally; what completed is looked at below
            }
        }
        return p.isDone() || kill.isDone();
    }
}
