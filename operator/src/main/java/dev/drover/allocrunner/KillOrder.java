package dev.drover.allocrunner;

import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.taskrunner.TaskRunner;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The kill order, in one place: the leader first (and waited for), then the
 * other tasks together, then the sidecars; poststop tasks are killed only on
 * destroy (otherwise they run next). Each group waits at most {@code deadline}.
 */
final class KillOrder {

    private static final Logger LOG = LoggerFactory.getLogger(KillOrder.class);

    private KillOrder() {}

    /**
     * @param cause the event each killed task records first (e.g. LeaderTaskDead), or null
     */
    static void kill(
            List<Task> spec,
            Map<String, TaskRunner> runners,
            Predicate<String> dead,
            Supplier<TaskEvent> cause,
            boolean withPoststop,
            Duration deadline)
            throws InterruptedException {
        List<TaskRunner> leaders = new ArrayList<>();
        List<TaskRunner> others = new ArrayList<>();
        List<TaskRunner> sidecars = new ArrayList<>();
        List<TaskRunner> poststop = new ArrayList<>();
        for (Task t : spec) {
            TaskRunner r = runners.get(t.getName());
            if (LifecycleCoordinator.gateOf(t) == LifecycleCoordinator.Gate.POSTSTOP) {
                poststop.add(r);
            } else if (t.isLeaderTask()) {
                leaders.add(r);
            } else if (t.isSidecar()) {
                sidecars.add(r);
            } else {
                others.add(r);
            }
        }
        killGroup(leaders, dead, cause, deadline);
        killGroup(others, dead, cause, deadline);
        killGroup(sidecars, dead, cause, deadline);
        if (withPoststop) {
            killGroup(poststop, dead, cause, deadline);
        }
    }

    private static void killGroup(
            List<TaskRunner> group, Predicate<String> dead, Supplier<TaskEvent> cause, Duration deadline)
            throws InterruptedException {
        List<CompletableFuture<Void>> kills = new ArrayList<>();
        for (TaskRunner r : group) {
            if (!dead.test(r.name())) {
                kills.add(r.kill(cause == null ? null : cause.get()));
            }
        }
        try {
            CompletableFuture.allOf(kills.toArray(CompletableFuture[]::new))
                    .get(deadline.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            LOG.warn("tasks still dying after {}; going on", deadline);
        } catch (ExecutionException e) {
            LOG.warn("a kill failed: {}", e.getCause().toString());
        }
    }
}
