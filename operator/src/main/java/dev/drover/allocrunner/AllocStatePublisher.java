package dev.drover.allocrunner;

import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskState;
import dev.drover.state.AllocId;
import dev.drover.state.AllocRunnerState;
import dev.drover.state.StateDB;
import dev.drover.state.StateStoreException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

/**
 * What an alloc runner knows of its allocation's state: each task's latest state as its task runner told it, the
 * generation of the spec acted on, and a version that grows with every change. Each change is stored (but not
 * while the allocation is destroyed: the destroy removes what is stored), then told to the listener. Task runners
 * write it from their threads, the alloc runner reads it from its own.
 */
final class AllocStatePublisher {

    /** Told of every change; must not block. */
    @FunctionalInterface
    interface Listener {
        /** {@code events} are the task events behind the change (of the task named), oldest first; may be none. */
        void changed(AllocState state, String task, List<TaskEvent> events);
    }

    private final AllocId id;
    private final StateDB stateDB;
    private final List<String> tasks;
    private final BooleanSupplier destroying;
    private final Listener listener;
    private final Map<String, TaskState> states = new LinkedHashMap<>();
    private final AtomicLong version = new AtomicLong();
    private long observedGeneration;
    private dev.drover.api.v1alpha1.NetworkStatus network;
    /** The {@code drover.dev/restartedAt} value last acted on ({@link UserRestart}), stored with the state. */
    private String restartedAt;

    /** @param tasks the allocation's task names, in spec order */
    AllocStatePublisher(
            AllocId id,
            StateDB stateDB,
            List<String> tasks,
            long observedGeneration,
            String restartedAt,
            BooleanSupplier destroying,
            Listener listener) {
        this.id = id;
        this.stateDB = stateDB;
        this.tasks = List.copyOf(tasks);
        this.observedGeneration = observedGeneration;
        this.restartedAt = restartedAt;
        this.destroying = destroying;
        this.listener = listener;
    }

    /** A task's state as a restored allocation's store kept it: taken as it is, not published. */
    synchronized void restored(String task, TaskState state) {
        states.put(task, state);
    }

    void taskChanged(String task, TaskState state, List<TaskEvent> events) {
        synchronized (this) {
            states.put(task, state);
        }
        publish(task, events);
    }

    synchronized void observed(Long generation) {
        if (generation != null) {
            observedGeneration = generation;
        }
    }

    /** Takes {@code value} as the restart annotation's now; returns whether it differs from the one acted on last. */
    synchronized boolean restartAnnotation(String value) {
        if (value.equals(restartedAt)) {
            return false;
        }
        restartedAt = value;
        return true;
    }

    void publish(String task, List<TaskEvent> events) {
        version.incrementAndGet();
        AllocState state = allocState();
        String restartValue;
        synchronized (this) {
            restartValue = restartedAt;
        }
        if (!destroying.getAsBoolean()) {
            try {
                stateDB.putAllocRunnerState(
                        id,
                        new AllocRunnerState(
                                state.clientStatus().name(),
                                state.clientDescription(),
                                state.observedGeneration(),
                                restartValue));
            } catch (StateStoreException e) {
                // as for the spec: the store writes it again; the runner and its tasks go on
            }
        }
        listener.changed(state, task, events);
    }

    synchronized AllocState allocState() {
        ClientStatuses.Result status = ClientStatuses.of(states.values());
        return new AllocState(
                version.get(), status.status(), status.description(), observedGeneration, states, network);
    }

    /** The allocation's network changed: published as a change of no task. */
    void network(dev.drover.api.v1alpha1.NetworkStatus now) {
        synchronized (this) {
            if (java.util.Objects.equals(network, now)) {
                return;
            }
            network = now;
        }
        publish(null, List.of());
    }

    /** Every task's state as the lifecycle rules need it, in spec order; a task not heard from yet is pending. */
    synchronized Map<String, LifecycleCoordinator.Status> statuses() {
        Map<String, LifecycleCoordinator.Status> out = new LinkedHashMap<>();
        for (String name : tasks) {
            TaskState s = states.get(name);
            out.put(
                    name,
                    s == null
                            ? new LifecycleCoordinator.Status(TaskState.State.Pending, false)
                            : new LifecycleCoordinator.Status(s.getState(), Boolean.TRUE.equals(s.getFailed())));
        }
        return out;
    }

    synchronized boolean isDead(String task) {
        TaskState s = states.get(task);
        return s != null && s.getState() == TaskState.State.Dead;
    }

    boolean allDead() {
        return statuses().values().stream().allMatch(LifecycleCoordinator.Status::dead);
    }
}
