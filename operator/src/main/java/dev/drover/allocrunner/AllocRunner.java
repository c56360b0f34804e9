package dev.drover.allocrunner;

import dev.drover.allocwatcher.PreviousAllocations;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.DesiredStatus;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.api.v1alpha1.TaskState;
import dev.drover.common.UserText;
import dev.drover.concurrent.HandOffThreads;
import dev.drover.state.AllocId;
import dev.drover.state.StateStoreException;
import dev.drover.state.StoredAllocation;
import dev.drover.taskrunner.TaskRunner;
import dev.drover.taskrunner.TaskRunnerConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * Runs one allocation, phase by phase: the prerun hooks (its directory, the previous allocation: {@link
 * AllocRunnerHooks}), its tasks started stage by stage ({@link LifecycleCoordinator}), the leader, sibling and
 * sidecar rules ({@link SiblingRules}), newer specs as they come, the kills in {@link KillOrder}, and on destroy the
 * destroy hooks. One virtual thread at a time runs the loop; task runners wake it on every change, which the runner
 * stores and publishes. With nothing to do the thread ends, and the next wake starts another ({@link LoopWakes}):
 * an allocation that runs costs no parked thread.
 *
 * <p>{@link #alloc()} is the allocation as last given, never written to; {@link #allocState()} is what the runner
 * made of it.
 */
public final class AllocRunner {

    private static final Logger LOG = LoggerFactory.getLogger(AllocRunner.class);

    private final AllocRunnerConfig cfg;
    private final AllocStateListener listener;
    private final AllocId id;
    private volatile Allocation alloc;
    private final AllocDir dir;
    private final Map<String, TaskRunner> tasks = new LinkedHashMap<>();
    private final AllocStatePublisher state;
    /** Runners rebuilt from the store: started first, so running tasks are reattached before anything else. */
    private final List<TaskRunner> restored = new ArrayList<>();
    /** Rebuilt from the store with its prerun hooks done before the restart ({@link RestoredTasks#prerunDone}). */
    private final boolean prerunDone;
    /** Completes on {@link #run}: until then nothing starts, and a restored runner only supervises reattached tasks. */
    private final CompletableFuture<Void> confirmed = new CompletableFuture<>();

    private final LifecycleCoordinator coordinator;
    private final AllocRunnerHooks hooks;
    private final LatestUpdate<Allocation> updates;
    private final CompletableFuture<Void> terminal = new CompletableFuture<>();
    private final CompletableFuture<Void> stopped = new CompletableFuture<>();
    private volatile boolean shuttingDown;
    private volatile boolean destroying;
    /** The destroy hooks have run: the allocation's directory and stored state are gone. */
    private boolean destroyed;

    private boolean killedAll;
    private boolean siblingsHandled;
    private final HandOffThreads threads;
    private final LoopWakes wakes;
    private final NetworkHook network;

    /**
     * @param listener told of every change of this runner's state (its creator's, not shared with other runners)
     * @param previous where the allocation this one replaces is waited on and its disk found
     */
    public AllocRunner(
            AllocRunnerConfig cfg, Allocation allocation, AllocStateListener listener, PreviousAllocations previous) {
        // The spec is stored before any task runner exists: a store that cannot write refuses the runner whole,
        // rather than leaving task runners behind that already told the controller of their first events.
        Allocation own = Specs.copy(allocation);
        cfg.stateDB().putAllocation(idOf(own), own);
        this(cfg, own, RestoredTasks.NONE, UserRestart.valueOf(own), listener, previous);
    }

    /**
     * A runner rebuilt from the store after an agent restart: tasks that were
     * running are reattached (no new Started), dead ones stay dead, and the
     * allocation carries on from where it was.
     */
    public static AllocRunner restore(
            AllocRunnerConfig cfg, StoredAllocation stored, AllocStateListener listener, PreviousAllocations previous) {
        Allocation allocation = stored.spec()
                .orElseThrow(() -> new IllegalArgumentException("stored allocation " + stored.id() + " has no spec"));
        RestoredTasks tasks = RestoredTasks.of(allocation.getSpec().getTasks(), stored);
        return new AllocRunner(cfg, allocation, tasks, UserRestart.actedOn(stored, allocation), listener, previous);
    }

    /**
     * @param allocation the runner's own snapshot (a copy made for it, or read back from the store)
     * @param stored     what the store kept of its tasks ({@link RestoredTasks#NONE} for a new runner)
     * @param restartedAt the restart annotation's value acted on ({@link UserRestart})
     */
    private AllocRunner(
            AllocRunnerConfig cfg,
            Allocation allocation,
            RestoredTasks stored,
            String restartedAt,
            AllocStateListener listener,
            PreviousAllocations previous) {
        this.cfg = cfg;
        this.listener = listener;
        this.alloc = allocation;
        this.id = idOf(alloc);
        this.threads = new HandOffThreads("alloc-" + id);
        this.wakes = new LoopWakes(threads, () -> stretch(this::passes));
        this.dir = AllocDir.of(cfg.dataDir(), id);
        this.coordinator = new LifecycleCoordinator(alloc.getSpec().getTasks());
        long generation = Specs.generation(alloc);
        this.updates = new LatestUpdate<>(generation);
        List<String> names =
                alloc.getSpec().getTasks().stream().map(Task::getName).toList();
        this.state = new AllocStatePublisher(
                id,
                cfg.stateDB(),
                names,
                generation,
                restartedAt,
                () -> destroying,
                (now, task, events) -> listener.allocStateChanged(id, now, task, events));
        this.prerunDone = stored.prerunDone();
        this.network = new NetworkHook(cfg.networks(), id, cfg.stateDB(), n -> state.network(n.status()));
        for (Task t : alloc.getSpec().getTasks()) {
            TaskState saved = stored.states().get(t.getName());
            TaskRunner runner;
            if (saved != null) {
                runner = TaskRunner.restore(
                        taskConfig(t), saved, stored.localStates().get(t.getName()));
                state.restored(t.getName(), saved);
                runner.startsAfter(confirmed);
                if (prerunDone) {
                    restored.add(runner);
                } // else no task ever started: they start as new ones do, in lifecycle order, once the prerun is done
            } else {
                runner = new TaskRunner(taskConfig(t));
            }
            tasks.put(t.getName(), runner);
        }
        AllocHookContext ctx = new AllocHookContext(
                id,
                () -> alloc,
                dir,
                cfg.dataDir(),
                cfg.stateDB(),
                cfg.clock(),
                () -> shuttingDown || destroying,
                e -> tasks.values().forEach(r -> r.recordEvent(e)),
                () -> List.copyOf(tasks.keySet()),
                prerunDone,
                (reason, message) -> listener.allocWarning(id, reason, message));
        this.hooks = new AllocRunnerHooks(
                previous,
                network,
                cfg.allocHooks(),
                ctx,
                (hook, phase, failure) -> listener.hookFailed(id, hook, phase, failure));
    }

    private static AllocId idOf(Allocation a) {
        return new AllocId(a.getMetadata().getNamespace(), a.getMetadata().getName());
    }

    private TaskRunnerConfig taskConfig(Task t) {
        return TaskSetup.config(cfg, id, alloc.getSpec(), dir, t, this::taskChanged, network, network::checkAddress);
    }

    public AllocId id() {
        return id;
    }

    /** The allocation as last given (its newest spec the runner acted on): a copy; the runner never changes it. */
    public Allocation alloc() {
        return Specs.copy(alloc);
    }

    /**
     * The tasks of the spec the runner acts on, read-only and not copied (unlike {@link #alloc()}): for a holder that
     * would otherwise keep a copy of its own. Replaced, never changed, when the runner takes a newer spec.
     */
    public List<Task> tasks() {
        return Collections.unmodifiableList(alloc.getSpec().getTasks());
    }

    /** The allocation's task runners by name, in spec order. */
    public Map<String, TaskRunner> taskRunners() {
        return Collections.unmodifiableMap(tasks);
    }

    /** The runner of {@code task}, to signal or run a command in; an unknown task is illegal. */
    public TaskRunner task(String task) {
        TaskRunner r = tasks.get(task);
        if (r == null) {
            throw new IllegalArgumentException("allocation " + id + " has no task " + UserText.quote(task));
        }
        return r;
    }

    /**
     * The API server's newest copy's restart annotation: a new value restarts the running tasks it names once
     * ({@link UserRestart}), stored as acted on first; a value it cannot act on is a warning.
     */
    public void restartRequested(Allocation newest) {
        String value = UserRestart.valueOf(newest);
        if (!state.restartAnnotation(value) || value.isEmpty()) {
            return;
        }
        state.publish(null, List.of()); // stored before any task restarts: a later agent does not restart them again
        UserRestart.act(value, UserRestart.reason(newest), tasks)
                .ifPresent(why -> listener.allocWarning(id, UserRestart.REFUSED, why));
    }

    /** The allocation's directory on this node. */
    public AllocDir dir() {
        return dir;
    }

    public AllocState allocState() {
        return state.allocState();
    }

    /** Completes when every task is dead for good (the allocation is terminal). */
    public CompletableFuture<Void> terminal() {
        return terminal;
    }

    /** Starts the runner's thread, or lets one that {@link #reattach}ed start what it may; returns at once. */
    public synchronized void run() {
        confirmed.complete(null);
        if (!destroying && !threads.start(this::loop)) {
            wakes.wake();
        }
    }

    /** Reattaches and supervises a restored runner's running tasks now (only {@link #run} starts any): when tried. */
    public synchronized Optional<CompletableFuture<Void>> reattach() {
        if (!prerunDone || destroying || restored.stream().noneMatch(TaskRunner::reattaches)) {
            return Optional.empty(); // none to reattach: all of it waits for run
        }
        threads.start(this::loop);
        return Optional.of(CompletableFuture.allOf(
                restored.stream().map(TaskRunner::attached).toArray(CompletableFuture[]::new)));
    }

    /**
     * A newer spec of the allocation; stale ones (lower generation) are dropped. Stop kills the tasks; otherwise the
     * tasks whose definition changed restart with it, and the update hooks see it.
     */
    public void update(Allocation newer) {
        if (updates.offer(Specs.generation(newer), Specs.copy(newer))) {
            wakes.wake();
        }
    }

    /**
     * Kills everything and, once every task is dead, runs the destroy hooks (which remove the directory and the
     * stored state). Waits at most {@link AllocRunnerConfig#destroyDeadline()}; returns at once if never run.
     * Returns whether it is done: false while a task may still be alive (its kill keeps failing, or the agent
     * stops), and then nothing is removed, the kill goes on, and a later call looks again.
     */
    public boolean destroy() throws InterruptedException {
        boolean first;
        boolean started;
        synchronized (this) {
            first = !destroying;
            destroying = true;
            started = threads.started();
        }
        if (!started) {
            if (first) {
                tasks.values().forEach(r -> r.kill(null));
            }
        } else {
            wakes.wake();
            BoundedWait.await(stopped, cfg.destroyDeadline());
        }
        BoundedWait.await(
                CompletableFuture.allOf(
                        tasks.values().stream().map(TaskRunner::done).toArray(CompletableFuture[]::new)),
                cfg.destroyDeadline());
        synchronized (this) {
            if (destroyed) {
                return true;
            }
            List<String> alive = tasks.keySet().stream()
                    .filter(name -> !tasks.get(name).done().isDone() || !state.isDead(name))
                    .toList();
            if (shuttingDown || !alive.isEmpty()) {
                LOG.warn(
                        "allocation {}: tasks {} may still be alive; their directory and stored state stay until"
                                + " they are dead",
                        id,
                        alive);
                return false;
            }
            destroyed = true;
        }
        hooks.destroy();
        return true;
    }

    /** Stops the runner for an agent shutdown: tasks keep running. Joins every thread. */
    public void shutdown() throws InterruptedException {
        shuttingDown = true;
        wakes.wake();
        for (TaskRunner r : tasks.values()) {
            r.shutdown();
        }
        threads.join();
        hooks.shutdown();
    }

    private void loop() {
        stretch(() -> {
            if (!hooks.prerun()) {
                if (destroying) {
                    killAll(null, true); // tasks that never started end at once, never run
                }
                return false;
            }
            restored.forEach(TaskRunner::run);
            return passes();
        });
    }

    /** One pass after another while woken; true when idle (its thread ends, the next wake starts another). */
    private boolean passes() throws InterruptedException {
        while (!shuttingDown) {
            if (destroying) {
                killAll(null, true);
                return false;
            }
            updates.take(Duration.ZERO).ifPresent(this::applyUpdate);
            step();
            if (state.allDead()) {
                return false;
            }
            if (wakes.idleUnlessWoken()) {
                return true;
            }
        }
        return false;
    }

    private interface Stretch {
        /** True when the loop ended idle (a wake carries on), false when it is done. */
        boolean run() throws Exception;
    }

    private void stretch(Stretch work) {
        MDC.put("alloc", id.toString());
        boolean waiting = false;
        try {
            waiting = work.run();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            LOG.error("alloc runner {} failed", id, e);
            TaskEvent failure = TaskEvent.of(
                            TaskEventType.SetupFailure, cfg.clock().instant())
                    .withMessage("allocation setup failed: " + e.getMessage());
            tasks.values().forEach(r -> r.kill(failure));
        } finally {
            if (!waiting) {
                if (state.allDead()) {
                    hooks.postrun();
                    terminal.complete(null);
                }
                stopped.complete(null);
            }
        }
    }

    private void applyUpdate(Allocation newer) {
        state.observed(newer.getMetadata().getGeneration());
        if (newer.getSpec().effectiveDesiredStatus() == DesiredStatus.Stop) {
            killAll(null, false);
        } else if (!killedAll) {
            SpecChanges.restartChangedTasks(id, alloc, newer, tasks);
            hooks.update(newer);
        }
        alloc = newer;
        try {
            cfg.stateDB().putAllocation(id, newer); // what a restart restores
        } catch (StateStoreException e) {
            // kept by the store and written again once it can; reported through the allocation's status
        }
        state.publish(null, List.of());
    }

    /** One pass: open gates, start what may start, apply the leader and sibling rules (not before {@link #run}). */
    private void step() {
        if (!confirmed.isDone()) {
            return;
        }
        Map<String, LifecycleCoordinator.Status> statuses = state.statuses();
        coordinator.update(statuses);
        if (!killedAll) {
            for (Task t : alloc.getSpec().getTasks()) {
                if (coordinator.mayStart(t) && statuses.get(t.getName()).state() == TaskState.State.Pending) {
                    tasks.get(t.getName()).run();
                }
            }
        } else {
            for (Task t : alloc.getSpec().getTasks()) {
                if (LifecycleCoordinator.gateOf(t) == LifecycleCoordinator.Gate.POSTSTOP && coordinator.mayStart(t)) {
                    tasks.get(t.getName()).run();
                }
            }
        }
        applySiblingRules(statuses);
    }

    private void applySiblingRules(Map<String, LifecycleCoordinator.Status> statuses) {
        if (!siblingsHandled && !killedAll) {
            SiblingRules.killCause(alloc.getSpec().getTasks(), statuses, cfg.clock())
                    .ifPresent(cause -> {
                        siblingsHandled = true;
                        killAll(cause, false);
                    });
        }
    }

    /** Kills every task in {@link KillOrder}; poststop tasks too only when {@code withPoststop} (destroy). */
    private void killAll(Supplier<TaskEvent> cause, boolean withPoststop) {
        killedAll = true;
        try {
            KillOrder.kill(
                    alloc.getSpec().getTasks(), tasks, state::isDead, cause, withPoststop, cfg.destroyDeadline());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void taskChanged(String task, TaskState taskState, List<TaskEvent> events) {
        state.taskChanged(task, taskState, events);
        wakes.wake();
    }
}
