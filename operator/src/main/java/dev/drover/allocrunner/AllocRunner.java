package dev.drover.allocrunner;

import dev.drover.allocwatcher.PreviousAllocations;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.DesiredStatus;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.api.v1alpha1.TaskState;
import dev.drover.driver.TaskConfig;
import dev.drover.state.AllocId;
import dev.drover.state.AllocRunnerState;
import dev.drover.state.StateStoreException;
import dev.drover.state.StoredAllocation;
import dev.drover.state.StoredTask;
import dev.drover.taskrunner.TaskRunner;
import dev.drover.taskrunner.TaskRunnerConfig;
import dev.drover.taskrunner.hooks.TaskHooks;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * Runs one allocation: builds its directory, starts its tasks stage by stage
 * ({@link LifecycleCoordinator}), applies the leader, sibling and sidecar rules,
 * kills in order, and publishes its state. One virtual thread runs the loop;
 * task runners wake it on every change.
 *
 * <p>{@link #alloc()} is the allocation as given (never written to);
 * {@link #allocState()} is what the runner made of it.
 */
public final class AllocRunner {

    private static final Logger LOG = LoggerFactory.getLogger(AllocRunner.class);

    private final AllocRunnerConfig cfg;
    private final AllocStateListener listener;
    private final AllocId id;
    private volatile Allocation alloc;
    private final AllocDir dir;
    private final Map<String, TaskRunner> tasks = new LinkedHashMap<>();
    private final Map<String, TaskState> taskStates = new LinkedHashMap<>();
    /** Runners rebuilt from the store: started first, so running tasks are reattached before anything else. */
    private final List<TaskRunner> restored = new ArrayList<>();
    /** Rebuilt from the store with its prerun hooks done before the restart (see {@link #everStarted}). */
    private final boolean prerunDone;
    private final LifecycleCoordinator coordinator;
    /** The alloc hooks, in the order their phases run: directory, previous allocation, state, then the agent's. */
    private final List<AllocHooks.Hook> hooks;
    private final LatestUpdate<Allocation> updates;
    private final Semaphore wake = new Semaphore(0);
    private final AtomicLong version = new AtomicLong();
    private final CompletableFuture<Void> terminal = new CompletableFuture<>();
    private final CompletableFuture<Void> stopped = new CompletableFuture<>();
    private volatile boolean shuttingDown;
    private volatile boolean destroying;
    /** The destroy hooks have run: the allocation's directory and stored state are gone. */
    private boolean destroyed;
    private boolean killedAll;
    private boolean siblingsHandled;
    private long observedGeneration;
    private Thread thread;

    /**
     * @param listener told of every change of this runner's state (its creator's, not shared with other runners)
     * @param previous where the allocation this one replaces is waited on and its disk found
     */
    public AllocRunner(AllocRunnerConfig cfg, Allocation allocation, AllocStateListener listener,
                       PreviousAllocations previous) {
        // The spec is stored before any task runner exists: a store that cannot write refuses the runner whole,
        // rather than leaving task runners behind that already told the controller of their first events.
        Allocation own = Specs.copy(allocation);
        cfg.stateDB().putAllocation(new AllocId(own.getMetadata().getNamespace(), own.getMetadata().getName()),
                Specs.toJson(own));
        this(cfg, own, null, listener, previous);
    }

    /**
     * A runner rebuilt from the store after an agent restart: tasks that were
     * running are reattached (no new Started), dead ones stay dead, and the
     * allocation carries on from where it was.
     */
    public static AllocRunner restore(AllocRunnerConfig cfg, StoredAllocation stored, AllocStateListener listener,
                                      PreviousAllocations previous) {
        Allocation allocation = Specs.allocation(stored.spec().orElseThrow(() ->
                new IllegalArgumentException("stored allocation " + stored.id() + " has no spec")));
        return new AllocRunner(cfg, allocation, stored, listener, previous);
    }

    /** @param allocation the runner's own snapshot (a copy made for it, or read back from the store) */
    private AllocRunner(AllocRunnerConfig cfg, Allocation allocation, StoredAllocation stored,
                        AllocStateListener listener, PreviousAllocations previous) {
        this.cfg = cfg;
        this.listener = listener;
        this.alloc = allocation;
        this.id = new AllocId(alloc.getMetadata().getNamespace(), alloc.getMetadata().getName());
        this.dir = AllocDir.of(cfg.dataDir(), id);
        this.coordinator = new LifecycleCoordinator(alloc.getSpec().getTasks());
        Long generation = alloc.getMetadata().getGeneration();
        this.observedGeneration = generation == null ? 0 : generation;
        this.updates = new LatestUpdate<>(observedGeneration);
        List<AllocHooks.Hook> allHooks = new ArrayList<>(List.of(new AllocDirHook(), new PreviousAllocHook(previous),
                new StateHook()));
        allHooks.addAll(cfg.allocHooks());
        this.hooks = List.copyOf(allHooks);
        Map<String, TaskState> storedStates = new LinkedHashMap<>();
        for (Task t : alloc.getSpec().getTasks()) {
            StoredTask saved = stored == null ? null : stored.tasks().get(t.getName());
            if (saved != null && saved.state().isPresent() && saved.localState().isPresent()) {
                storedStates.put(t.getName(), Specs.taskState(saved.state().get()));
            }
        }
        this.prerunDone = storedStates.values().stream().anyMatch(AllocRunner::everStarted);
        for (Task t : alloc.getSpec().getTasks()) {
            TaskState state = storedStates.get(t.getName());
            TaskRunner runner;
            if (state != null) {
                runner = TaskRunner.restore(taskConfig(t), state, stored.tasks().get(t.getName()).localState().get());
                taskStates.put(t.getName(), state);
                if (prerunDone) {
                    restored.add(runner);
                } // else no task ever started: they start as new ones do, in lifecycle order, once the prerun is done
            } else {
                runner = new TaskRunner(taskConfig(t));
            }
            tasks.put(t.getName(), runner);
        }
    }

    /**
     * Whether a stored task state shows the task was started. Tasks start only after the prerun hooks (the
     * previous allocation's wait and migration), so a restored allocation none of whose tasks ever started has
     * not finished them: every task runner stores {@code Received} before the wait.
     */
    private static boolean everStarted(TaskState state) {
        return state.getState() != TaskState.State.Pending || state.getStartedAt() != null;
    }

    private TaskRunnerConfig taskConfig(Task t) {
        TaskConfig template = new TaskConfig(id.namespace(), id.name(), t.getName(), Map.of(), Map.of(),
                dir.shared(), dir.taskDir(t.getName()), dir.logs(), dir.taskSecrets(t.getName()));
        return new TaskRunnerConfig(id, alloc.getSpec(), t, template, cfg.drivers(),
                TaskHooks.defaults(cfg.drivers(), dir::buildTask, cfg.extraPrestartHooks()), cfg.stateDB(), this::taskChanged,
                cfg.clock(), cfg.random(), cfg.maxKillTimeout(), cfg.driverDeadline(), cfg.stopRetry());
    }

    public AllocId id() {
        return id;
    }

    /** The allocation as it was given: the spec snapshot, never changed by the runner. */
    public Allocation alloc() {
        return Specs.copy(alloc);
    }

    /** The allocation's task runners by name, in spec order. */
    public Map<String, TaskRunner> taskRunners() {
        return Collections.unmodifiableMap(tasks);
    }

    /** The allocation's directory on this node. */
    public AllocDir dir() {
        return dir;
    }

    public synchronized AllocState allocState() {
        ClientStatuses.Result status = ClientStatuses.of(taskStates.values());
        return new AllocState(version.get(), status.status(), status.description(), observedGeneration, taskStates);
    }

    /** Completes when every task is dead for good (the allocation is terminal). */
    public CompletableFuture<Void> terminal() {
        return terminal;
    }

    /** Starts the runner's thread; returns at once. */
    public synchronized void run() {
        if (thread == null && !destroying) {
            thread = Thread.ofVirtual().name("alloc-" + id).start(this::loop);
        }
    }

    /** A newer spec of the allocation; stale ones (lower generation) are dropped. Only Stop acts on it so far. */
    public void update(Allocation newer) {
        Long generation = newer.getMetadata().getGeneration();
        if (updates.offer(generation == null ? 0 : generation, Specs.copy(newer))) {
            wake.release();
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
        Thread t;
        synchronized (this) {
            first = !destroying;
            destroying = true;
            t = thread;
        }
        if (t == null) {
            if (first) {
                tasks.values().forEach(r -> r.kill(null));
            }
        } else {
            wake.release();
            waitBounded(stopped, cfg.destroyDeadline());
        }
        waitBounded(CompletableFuture.allOf(tasks.values().stream().map(TaskRunner::done)
                .toArray(CompletableFuture[]::new)), cfg.destroyDeadline());
        synchronized (this) {
            if (destroyed) {
                return true;
            }
            List<String> alive = tasks.keySet().stream().filter(name -> !tasks.get(name).done().isDone()
                    || !isDead(name)).toList();
            if (shuttingDown || !alive.isEmpty()) {
                LOG.warn("allocation {}: tasks {} may still be alive; their directory and stored state stay until"
                        + " they are dead", id, alive);
                return false;
            }
            destroyed = true;
        }
        AllocHookContext ctx = hookContext();
        eachHook(AllocHooks.Destroy.class, "destroy", hook -> hook.destroy(ctx));
        return true;
    }

    /** Stops the runner for an agent shutdown: tasks keep running. Joins every thread. */
    public void shutdown() throws InterruptedException {
        shuttingDown = true;
        wake.release();
        for (TaskRunner r : tasks.values()) {
            r.shutdown();
        }
        Thread t;
        synchronized (this) {
            t = thread;
        }
        if (t != null) {
            t.join();
        }
        AllocHookContext ctx = hookContext();
        eachHook(AllocHooks.Shutdown.class, "shutdown", hook -> hook.shutdown(ctx));
    }

    /**
     * Runs one phase of every hook that has it, in order. Hooks are isolated: one that throws is logged and counted
     * ({@link AllocStateListener#hookFailed}), and the hooks after it run all the same.
     */
    private <H extends AllocHooks.Hook> void eachHook(Class<H> phase, String phaseName, Consumer<H> call) {
        for (AllocHooks.Hook hook : hooks) {
            if (!phase.isInstance(hook)) {
                continue;
            }
            try {
                call.accept(phase.cast(hook));
            } catch (RuntimeException e) {
                LOG.warn("allocation {}: the {} hook {} failed; the other hooks run all the same", id, phaseName,
                        hook.name(), e);
                listener.hookFailed(id, hook.name(), phaseName, e);
            }
        }
    }

    private AllocHookContext hookContext() {
        return new AllocHookContext(id, () -> alloc, dir, cfg.dataDir(), cfg.stateDB(), cfg.clock(),
                () -> shuttingDown || destroying, e -> tasks.values().forEach(r -> r.recordEvent(e)),
                () -> List.copyOf(tasks.keySet()), prerunDone,
                (reason, message) -> listener.allocWarning(id, reason, message));
    }

    private void loop() {
        MDC.put("alloc", id.toString());
        try {
            AllocHookContext ctx = hookContext();
            for (AllocHooks.Hook hook : hooks) {
                if (hook instanceof AllocHooks.Prerun prerun && !prerun.prerun(ctx)) {
                    if (destroying) {
                        killAll(null, true); // tasks that never started end at once, never run
                    }
                    return;
                }
            }
            restored.forEach(TaskRunner::run);
            while (!shuttingDown) {
                if (destroying) {
                    killAll(null, true);
                    return;
                }
                updates.take(Duration.ZERO).ifPresent(this::applyUpdate);
                step();
                if (allDead()) {
                    break;
                }
                wake.tryAcquire(1, TimeUnit.SECONDS);
                wake.drainPermits();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            LOG.error("alloc runner {} failed", id, e);
            TaskEvent failure = TaskEvent.of(TaskEventType.SetupFailure, cfg.clock().instant())
                    .withMessage("allocation setup failed: " + e.getMessage());
            tasks.values().forEach(r -> r.kill(failure));
        } finally {
            if (allDead()) {
                terminal.complete(null);
            }
            stopped.complete(null);
        }
    }

    private void applyUpdate(Allocation newer) {
        synchronized (this) {
            observedGeneration = newer.getMetadata().getGeneration() == null ? observedGeneration
                    : newer.getMetadata().getGeneration();
        }
        if (newer.getSpec().effectiveDesiredStatus() == DesiredStatus.Stop) {
            killAll(null, false);
        } else if (!killedAll) {
            restartChangedTasks(newer);
            AllocHookContext ctx = hookContext();
            eachHook(AllocHooks.Update.class, "update", hook -> hook.update(ctx, newer));
        }
        alloc = newer;
        try {
            cfg.stateDB().putAllocation(id, Specs.toJson(newer)); // what a restart restores
        } catch (StateStoreException e) {
            // kept by the store and written again once it can; reported through the allocation's status
        }
        publish(null, null);
    }

    /**
     * A spec change restarts only the tasks whose definition changed, with their new
     * definition. Tasks cannot be added or removed in place: that takes a new allocation.
     */
    private void restartChangedTasks(Allocation newer) {
        for (Task was : alloc.getSpec().getTasks()) {
            Task now = newer.getSpec().task(was.getName());
            if (now != null && !now.equals(was)) {
                tasks.get(was.getName()).update(now, newer.getSpec(), "Task definition changed (generation "
                        + newer.getMetadata().getGeneration() + ")");
            }
        }
        List<String> before = alloc.getSpec().getTasks().stream().map(Task::getName).sorted().toList();
        List<String> after = newer.getSpec().getTasks().stream().map(Task::getName).sorted().toList();
        if (!before.equals(after)) {
            LOG.warn("allocation {}: tasks {} became {}; adding or removing tasks needs a new allocation, the change"
                    + " is ignored for the tasks concerned", id, before, after);
        }
    }

    /** One pass: open gates, start what may start, apply the leader and sibling rules. */
    private void step() {
        Map<String, LifecycleCoordinator.Status> statuses = statuses();
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
        if (siblingsHandled || killedAll) {
            return;
        }
        List<Task> nonPoststop = alloc.getSpec().getTasks().stream()
                .filter(t -> LifecycleCoordinator.gateOf(t) != LifecycleCoordinator.Gate.POSTSTOP).toList();
        for (Task t : nonPoststop) {
            LifecycleCoordinator.Status s = statuses.get(t.getName());
            if (s.dead() && s.failed()) {
                siblingsHandled = true;
                killAll(() -> TaskEvent.of(TaskEventType.SiblingTaskFailed, cfg.clock().instant())
                        .withFailedSibling(t.getName()).withMessage("Task's sibling \"" + t.getName() + "\" failed"), false);
                return;
            }
        }
        for (Task t : nonPoststop) {
            LifecycleCoordinator.Status s = statuses.get(t.getName());
            if (t.isLeaderTask() && s.dead() && !s.failed()) {
                siblingsHandled = true;
                killAll(() -> TaskEvent.of(TaskEventType.LeaderTaskDead, cfg.clock().instant())
                        .withMessage("Leader Task in Group dead"), false);
                return;
            }
        }
        boolean anyLive = false;
        boolean onlySidecarsLive = true;
        for (Task t : nonPoststop) {
            if (!statuses.get(t.getName()).dead()) {
                anyLive = true;
                onlySidecarsLive &= t.isSidecar();
            }
        }
        if (anyLive && onlySidecarsLive) {
            siblingsHandled = true;
            killAll(() -> TaskEvent.of(TaskEventType.MainTasksDead, cfg.clock().instant())
                    .withMessage("Main tasks in the group died"), false);
        }
    }

    /** Kills every task in {@link KillOrder}; poststop tasks too only when {@code withPoststop} (destroy). */
    private void killAll(Supplier<TaskEvent> cause, boolean withPoststop) {
        killedAll = true;
        try {
            KillOrder.kill(alloc.getSpec().getTasks(), tasks, this::isDead, cause, withPoststop, cfg.destroyDeadline());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private synchronized boolean isDead(String task) {
        TaskState s = taskStates.get(task);
        return s != null && s.getState() == TaskState.State.Dead;
    }

    private synchronized Map<String, LifecycleCoordinator.Status> statuses() {
        Map<String, LifecycleCoordinator.Status> out = new LinkedHashMap<>();
        for (String name : tasks.keySet()) {
            TaskState s = taskStates.get(name);
            out.put(name, s == null ? new LifecycleCoordinator.Status(TaskState.State.Pending, false)
                    : new LifecycleCoordinator.Status(s.getState(), Boolean.TRUE.equals(s.getFailed())));
        }
        return out;
    }

    private boolean allDead() {
        return statuses().values().stream().allMatch(LifecycleCoordinator.Status::dead);
    }

    private void taskChanged(String task, TaskState state, TaskEvent event) {
        synchronized (this) {
            taskStates.put(task, state);
        }
        publish(task, event);
        wake.release();
    }

    private void publish(String task, TaskEvent event) {
        version.incrementAndGet();
        AllocState state = allocState();
        if (!destroying) {
            try {
                cfg.stateDB().putAllocRunnerState(id, new AllocRunnerState(state.clientStatus().name(),
                        state.clientDescription(), state.observedGeneration()));
            } catch (StateStoreException e) {
                // as in applyUpdate: the store writes it again; the runner and its tasks go on
            }
        }
        listener.allocStateChanged(id, state, task, event);
    }

    private static void waitBounded(CompletableFuture<?> f, Duration deadline) throws InterruptedException {
        try {
            f.get(deadline.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            LOG.warn("gave up waiting after {}", deadline);
        } catch (ExecutionException e) {
            LOG.warn("wait failed: {}", e.getCause().toString());
        }
    }
}
