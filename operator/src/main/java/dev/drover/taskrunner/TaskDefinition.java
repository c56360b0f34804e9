package dev.drover.taskrunner;

import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.taskrunner.restarts.RestartTracker;
import java.util.function.Consumer;

/**
 * The task as its runner runs it now, and what is built from its definition: the restart tracker (its policy) and
 * the killer (its kill settings). A newer definition, from a changed spec, waits until {@link #apply} at the task's
 * next start; the tracker keeps its count of restarts across it.
 */
final class TaskDefinition {

    private final TaskRunnerConfig cfg;
    private final Consumer<TaskEvent> events;
    private final RestartTracker tracker;
    private volatile Task task;
    private volatile AllocationSpec spec;
    private volatile TaskKiller killer;
    private Task next;
    private AllocationSpec nextSpec;

    TaskDefinition(TaskRunnerConfig cfg, Consumer<TaskEvent> events) {
        this.cfg = cfg;
        this.events = events;
        this.task = cfg.task();
        this.spec = cfg.spec();
        this.killer = new TaskKiller(cfg, task, events);
        this.tracker = new RestartTracker(
                cfg.spec().effectiveRestartPolicy(task),
                cfg.spec().effectiveType(),
                task.hook(),
                task.isSidecar(),
                cfg.clock(),
                cfg.random());
    }

    Task task() {
        return task;
    }

    /** The allocation's spec the task's definition came with. */
    AllocationSpec spec() {
        return spec;
    }

    TaskKiller killer() {
        return killer;
    }

    RestartTracker tracker() {
        return tracker;
    }

    /** A newer definition, taken at the next {@link #apply}; a later one replaces it. */
    synchronized void offer(Task definition, AllocationSpec spec) {
        next = definition;
        nextSpec = spec;
    }

    /** Switches to the newer definition, if one came; returns whether one did. */
    synchronized boolean apply() {
        if (next == null) {
            return false;
        }
        task = next;
        spec = nextSpec;
        next = null;
        killer = new TaskKiller(cfg, task, events);
        tracker.update(nextSpec.effectiveRestartPolicy(task), nextSpec.effectiveType(), task.hook(), task.isSidecar());
        return true;
    }
}
