package dev.drover.allocrunner;

import dev.drover.api.v1alpha1.LifecycleHook;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskState;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Decides which lifecycle stages may start, from the tasks' states. Forward
 * only: a gate once open stays open. docs/semantics.md, Lifecycle:
 * prestart tasks (and prestart sidecars) start at once; main tasks once every
 * ephemeral prestart task is dead and not failed and every prestart sidecar is
 * running; poststart tasks once no main task is pending; poststop tasks once
 * every other task is dead.
 */
public final class LifecycleCoordinator {

    /** The gates, in the order they open. */
    public enum Gate {
        PRESTART,
        MAIN,
        POSTSTART,
        POSTSTOP
    }

    /** A task's state as the coordinator needs it. */
    public record Status(TaskState.State state, boolean failed) {
        boolean dead() {
            return state == TaskState.State.Dead;
        }
    }

    private final List<Task> tasks;
    private final Set<Gate> open = EnumSet.of(Gate.PRESTART);

    public LifecycleCoordinator(List<Task> tasks) {
        this.tasks = List.copyOf(tasks);
    }

    /** The gate a task waits for. */
    public static Gate gateOf(Task task) {
        LifecycleHook hook = task.hook();
        if (hook == null) {
            return Gate.MAIN;
        }
        return switch (hook) {
            case Prestart -> Gate.PRESTART;
            case Poststart -> Gate.POSTSTART;
            case Poststop -> Gate.POSTSTOP;
        };
    }

    /** Opens what the states allow; returns every open gate. Tasks missing from {@code states} are pending. */
    public synchronized Set<Gate> update(Map<String, Status> states) {
        if (!open.contains(Gate.MAIN) && prestartDone(states)) {
            open.add(Gate.MAIN);
        }
        if (open.contains(Gate.MAIN) && !open.contains(Gate.POSTSTART) && noMainPending(states)) {
            open.add(Gate.POSTSTART);
        }
        if (!open.contains(Gate.POSTSTOP) && allButPoststopDead(states)) {
            open.add(Gate.POSTSTOP);
        }
        return EnumSet.copyOf(open);
    }

    public synchronized boolean mayStart(Task task) {
        return open.contains(gateOf(task));
    }

    private boolean prestartDone(Map<String, Status> states) {
        for (Task t : tasks) {
            if (gateOf(t) != Gate.PRESTART) {
                continue;
            }
            Status s = status(states, t);
            boolean ok = t.isSidecar() ? s.state() == TaskState.State.Running : s.dead() && !s.failed();
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    private boolean noMainPending(Map<String, Status> states) {
        return tasks.stream()
                .filter(t -> gateOf(t) == Gate.MAIN)
                .noneMatch(t -> status(states, t).state() == TaskState.State.Pending);
    }

    private boolean allButPoststopDead(Map<String, Status> states) {
        return tasks.stream()
                .filter(t -> gateOf(t) != Gate.POSTSTOP)
                .allMatch(t -> status(states, t).dead());
    }

    private static Status status(Map<String, Status> states, Task t) {
        return states.getOrDefault(t.getName(), new Status(TaskState.State.Pending, false));
    }
}
