package dev.drover.taskrunner;

import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.api.v1alpha1.TaskState;
import dev.drover.concurrent.HandOffThreads;
import dev.drover.driver.Driver;
import dev.drover.driver.DriverEvent;
import dev.drover.driver.DriverException;
import dev.drover.driver.DriverStartException;
import dev.drover.driver.ExecProcess;
import dev.drover.driver.ExecRequest;
import dev.drover.driver.ExitResult;
import dev.drover.driver.TaskConfig;
import dev.drover.driver.TaskHandle;
import dev.drover.driver.TaskNotRunningException;
import dev.drover.driver.TaskStats;
import dev.drover.state.TaskLocalState;
import dev.drover.taskrunner.restarts.Outcome;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * Runs one task for as long as its allocation wants it: starts it through its
 * driver, waits for it, asks the restart tracker what next, waits the restart
 * delay, and records every step as a task event. Plain blocking code on a
 * virtual thread; {@link #kill}, {@link #restart} and {@link #shutdown} talk to
 * it through futures. Every wait on the driver has a deadline. While the task
 * runs, no thread waits for it: the runner's thread ends, and whichever comes
 * first (exit, kill, restart, shutdown) starts the next one to carry on, so a
 * running task costs no parked thread stack.
 */
public final class TaskRunner {

    private static final Logger LOG = LoggerFactory.getLogger(TaskRunner.class);

    private final TaskRunnerConfig cfg;
    private final String name;
    private final TaskDefinition definition;
    private final TaskStatePublisher state;
    private final DriverCalls calls;
    private final CompletableFuture<TaskEvent> killRequest = new CompletableFuture<>();
    private final CompletableFuture<Void> shutdownRequest = new CompletableFuture<>();
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    private final RestartRequests restarts = new RestartRequests();
    private final RestartStep restartStep;
    private TaskHandle restoredHandle;
    /** Rebuilt from the store by an agent that restarted (its task may have been started by the one before). */
    private boolean restored;

    private final StartPermit startPermit = new StartPermit();
    private final CompletableFuture<Void> attached = new CompletableFuture<>();

    private final HandOffThreads threads;
    private final LiveTask live;
    private final RunEnd runEnd;

    /** A runner for a task not started before. */
    public TaskRunner(TaskRunnerConfig cfg) {
        this(cfg, new TaskStateRecorder(), TaskLocalState.initial(cfg.task().getDriver()));
        state.event(TaskEvent.of(TaskEventType.Received, cfg.clock().instant()).withMessage("Task received by client"));
    }

    private TaskRunner(TaskRunnerConfig cfg, TaskStateRecorder recorder, TaskLocalState local) {
        this.cfg = cfg;
        this.name = cfg.task().getName();
        this.threads = new HandOffThreads("task-" + cfg.allocId() + "/" + name);
        this.state = new TaskStatePublisher(cfg, recorder, local);
        this.calls = new DriverCalls(cfg);
        this.definition = new TaskDefinition(cfg, state::event);
        this.live = new LiveTask(cfg, calls, state);
        this.restartStep = new RestartStep(state, cfg.clock(), killRequest, shutdownRequest);
        this.runEnd = new RunEnd(state, cfg.clock(), definition, restarts, killRequest, shutdownRequest);
    }

    /**
     * A runner rebuilt from the store after an agent restart. A task that was
     * running is reattached (no new Started); one that is dead stays dead.
     */
    public static TaskRunner restore(TaskRunnerConfig cfg, TaskState stored, TaskLocalState local) {
        TaskRunner r = new TaskRunner(cfg, new TaskStateRecorder(stored), local);
        r.restored = true;
        if (local.driverHandle() != null && stored.getState() == TaskState.State.Running) {
            r.restoredHandle = StoredHandles.fromStored(local.driverHandle());
        }
        return r;
    }

    public String name() {
        return name;
    }

    /** No start of the task before {@code permit} completes ({@link StartPermit}); call before {@link #run}. */
    public void startsAfter(CompletableFuture<?> permit) {
        startPermit.after(permit);
    }

    /** Whether the store held a handle of the task running, to reattach to. */
    public synchronized boolean reattaches() {
        return restoredHandle != null;
    }

    /** Completes once the runner's first step is over: its task reattached (or not), started, or found dead. */
    public CompletableFuture<Void> attached() {
        return attached;
    }

    public Task task() {
        return definition.task();
    }

    /** Starts the runner's thread; returns at once. */
    public synchronized void run() {
        if (threads.started()) {
            return;
        }
        if (state.current() == TaskState.State.Dead) {
            attached.complete(null);
            done.complete(null);
            return;
        }
        threads.start(this::loop);
    }

    /**
     * Kills the task: {@code cause} (e.g. a LeaderTaskDead event) is recorded first,
     * then the kill follows docs/semantics.md, Killing a task. Returns when the runner is done.
     */
    public CompletableFuture<Void> kill(TaskEvent cause) {
        killRequest.complete(cause);
        boolean neverRun;
        synchronized (this) {
            neverRun = restored && !threads.started() && restoredHandle == null && !done.isDone();
        }
        TaskHandle unrecorded = neverRun ? calls.findUnrecorded(task()) : null;
        synchronized (this) {
            boolean started = threads.started();
            if (unrecorded != null && !started && restoredHandle == null) {
                restoredHandle = unrecorded;
            }
            if (!started && restoredHandle != null && !done.isDone()) {
                // Rebuilt after an agent restart but never run: its process may still be alive; reattach, then kill it.
                threads.start(this::loop);
            } else if (!started && !done.isDone()) {
                // Never started (e.g. a main task behind a failed prestart): it just ends, never run; failed when
                // its allocation could not be set up, as a task whose own setup failed is.
                if (cause != null) {
                    state.event(cause);
                }
                state.deadUnrun(cause != null && cause.getType() == TaskEventType.SetupFailure);
                done.complete(null);
            }
        }
        return done;
    }

    /** Records an event that happened around the task (e.g. an allocation-level setup step). */
    public void recordEvent(TaskEvent e) {
        state.event(e);
    }

    /**
     * A new definition of the task (its allocation's spec changed): a running task is
     * restarted with it now ({@code RestartSignaled}), without counting against its
     * policy; a task waiting to start gets it when it starts; a dead one keeps its end.
     */
    public synchronized void update(Task newer, AllocationSpec spec, String reason) {
        definition.offer(newer, spec);
        if (state.current() == TaskState.State.Running) {
            restart(reason);
        }
    }

    /** Switches to the newer definition, if one came, for the start about to happen ({@link RestartRequests}). */
    private synchronized void applyNewDefinition() {
        definition.apply();
        restarts.startingNow();
    }

    /** Restarts a running task now, without counting against its policy (e.g. its spec changed). */
    public void restart(String reason) {
        restarts.ask(reason, false);
    }

    /**
     * Restarts a running task now because something about it failed (a check, as {@code checkRestart} says): counted
     * against its restart policy like a failed exit, so it may instead end failed; {@code reason} leads the event.
     */
    public void restartFailing(String reason) {
        restarts.ask(reason, true);
    }

    /**
     * Sends {@code signal} (a canonical name) to the running task, e.g. because a file it reads changed: a
     * {@code Signaling} event with {@code reason}, then the driver's signal within the runner's deadline. A send that
     * fails is a {@code DriverFailure} event as well as thrown; the task and its runner go on either way.
     *
     * @throws TaskNotRunningException when the task is not running (not started yet, between restarts, dead)
     */
    public void signal(String signal, String reason) throws DriverException, InterruptedException {
        live.signal(signal, reason);
    }

    /**
     * Starts {@code request}'s command inside the running task ({@link Driver#exec}), after an {@code Exec} event
     * saying {@code reason}; the caller reads, waits for and closes what it returns.
     *
     * @throws TaskNotRunningException when the task is not running (not started yet, between restarts, dead)
     */
    public ExecProcess exec(ExecRequest request, String reason) throws DriverException, InterruptedException {
        return live.exec(request, reason);
    }

    /** Stops the runner but leaves the task running, for an agent that is shutting down. Joins its threads. */
    public void shutdown() throws InterruptedException {
        shutdownRequest.complete(null); // ends a wait for the running task: its next thread starts
        threads.join();
    }

    /** Completes when the task is dead and the runner has stopped (or was shut down). */
    public CompletableFuture<Void> done() {
        return done;
    }

    public TaskState state() {
        return state.snapshot();
    }

    /**
     * The task's resource usage now, from its driver within a deadline; empty when it is not running (not started
     * yet, between restarts, dead, or its runner shut down).
     */
    public Optional<TaskStats> stats() throws DriverException, InterruptedException {
        return live.stats();
    }

    private void loop() {
        stretch(() -> {
            Driver driver = cfg.drivers().find(task().getDriver()).orElse(null);
            TaskHandle handle = restoredHandle != null && driver != null ? reattach(driver) : null;
            attached.complete(null);
            return supervise(driver, handle, true);
        });
    }

    /** A part of the runner's work on one thread, up to the end or to waiting for the running task. */
    private interface Stretch {
        /** True when it left the task running and watched (the next thread carries on), false when done. */
        boolean run() throws InterruptedException;
    }

    private void stretch(Stretch work) {
        MDC.put("alloc", cfg.allocId().toString());
        MDC.put("task", name);
        boolean watched = false;
        try {
            watched = work.run();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            LOG.error("task runner {}/{} failed", cfg.allocId(), name, e);
            state.event(TaskEvent.of(TaskEventType.DriverFailure, cfg.clock().instant())
                    .withDriverError("internal error: " + e));
            state.dead(true);
        } finally {
            attached.complete(null);
            if (!watched) {
                done.complete(null);
            }
        }
    }

    /** The supervision loop from {@code handle} (null: start the task); true when it left the task watched. */
    private boolean supervise(Driver driver, TaskHandle handle, boolean firstStep) throws InterruptedException {
        while (true) {
            Outcome outcome;
            if (handle == null && !startPermit.await(killRequest, shutdownRequest)) {
                return false; // the agent stops before the allocation was confirmed: the next one sees to the task
            }
            if (handle == null && killRequest.isDone()) {
                // killed before its first step here: an agent before this one may have started it and died before
                // recording the handle, and that process must not outlive the kill
                handle = firstStep && restored ? calls.findUnrecorded(task()) : null;
                if (handle == null) {
                    state.dead(false);
                    return false;
                }
            }
            firstStep = false;
            if (handle == null) {
                applyNewDefinition();
                driver = cfg.drivers().find(task().getDriver()).orElse(null); // the validate hook refuses a missing one
                TaskConfig config;
                try {
                    config = prestart();
                } catch (TaskHookException e) {
                    TaskEvent failure =
                            TaskEvent.of(e.eventType(), cfg.clock().instant()).withMessage(e.getMessage());
                    state.event(
                            e.eventType() == TaskEventType.FailedValidation
                                    ? failure.withValidationError(e.getMessage())
                                    : failure);
                    state.dead(true);
                    return false;
                }
                try {
                    handle = start(driver, config);
                } catch (DriverStartException e) {
                    state.event(TaskEvent.of(
                                    TaskEventType.DriverFailure, cfg.clock().instant())
                            .withDriverError(e.getMessage())
                            .withMessage(e.getMessage()));
                    outcome = new Outcome.StartFailed(e.getMessage(), e.recoverable());
                    if (!decideAndWait(outcome)) {
                        return false;
                    }
                    continue;
                }
            }
            watch(driver, handle);
            return true;
        }
    }

    private TaskHandle reattach(Driver driver) {
        try {
            TaskHandle h = calls.recover(driver, restoredHandle);
            LOG.info("reattached to task {}/{}", cfg.allocId(), name);
            return h;
        } catch (Exception e) {
            state.event(
                    TaskEvent.of(TaskEventType.FailedRestoringTask, cfg.clock().instant())
                            .withMessage("could not reattach to the task: " + DriverCalls.reason(e)));
            return null;
        }
    }

    /** Runs the prestart hooks in order (run-once hooks only once); returns the task as the driver gets it. */
    private TaskConfig prestart() throws TaskHookException {
        TaskHookContext ctx = new TaskHookContext(
                cfg.allocId(), task(), definition.spec(), cfg.template(), cfg.clock(), state::event);
        for (TaskPrestartHook hook : cfg.prestartHooks()) {
            if (hook.runOnce() && state.hookDone(hook.name())) {
                continue;
            }
            hook.prestart(ctx);
            if (hook.runOnce()) {
                state.markHookDone(hook.name());
            }
        }
        return ctx.taskConfig();
    }

    private TaskHandle start(Driver driver, TaskConfig config) throws DriverStartException, InterruptedException {
        TaskConfig told = config.withEvents(this::driverEvent);
        calls.prepare(driver, told);
        TaskHandle handle = calls.start(driver, told);
        restartStep.started();
        state.running(handle);
        state.event(TaskEvent.of(TaskEventType.Started, cfg.clock().instant()).withMessage("Task started by client"));
        return handle;
    }

    /** What the driver told as it started the task (an image fetched), as a task event. */
    private void driverEvent(DriverEvent e) {
        TaskEventType type = switch (e.kind()) {
            case DOWNLOADING -> TaskEventType.Downloading;
            case DOWNLOADED -> TaskEventType.Downloaded;
            case PULL_FAILED -> TaskEventType.PullFailed;
        };
        state.event(TaskEvent.of(type, cfg.clock().instant()).withMessage(e.message()));
    }

    /**
     * Watches the running task until it exits, is killed, is restarted on request, or the runner shuts down: the
     * running hooks start, and the first of those starts a thread that carries on ({@link #watched}).
     */
    private void watch(Driver driver, TaskHandle handle) throws InterruptedException {
        RunningTask running = new RunningTaskView(task(), restarts, live, live.watching(driver, handle), state);
        boolean watched = false;
        try {
            cfg.runningHooks().forEach(h -> h.running(running));
            CompletableFuture<ExitResult> exit = driver.exit(handle);
            CompletableFuture<RestartRequests.Ask> restart = restarts.pending();
            watched = true;
            awaitEnd(driver, handle, exit, restart);
        } finally {
            if (!watched) {
                stopWatching();
            }
        }
    }

    /**
     * Waits, on no thread, for what ends the run; a change held by the pacing that falls due meanwhile is published
     * first, one held by another thread during the wait included (a signal, a check's result).
     */
    private void awaitEnd(
            Driver driver,
            TaskHandle handle,
            CompletableFuture<ExitResult> exit,
            CompletableFuture<RestartRequests.Ask> restart) {
        threads.handingOff();
        CompletableFuture.anyOf(exit, killRequest, shutdownRequest, restart, state.due())
                .whenComplete(
                        (any, failed) -> threads.handOff(() -> stretch(() -> watched(driver, handle, exit, restart))));
    }

    private void stopWatching() throws InterruptedException {
        live.unwatched();
        for (TaskRunningHook h : cfg.runningHooks()) {
            h.stopped();
        }
    }

    /** After the watch: what ended it ({@link RunEnd}), then on with the supervision loop. */
    private boolean watched(
            Driver driver,
            TaskHandle handle,
            CompletableFuture<ExitResult> exit,
            CompletableFuture<RestartRequests.Ask> restart)
            throws InterruptedException {
        if (!runEnd.ended(exit, restart)) {
            state.flush(); // only a held change fell due: the task runs on
            awaitEnd(driver, handle, exit, restart);
            return true;
        }
        Outcome outcome;
        try {
            outcome = runEnd.outcome(driver, handle, exit, restart);
        } finally {
            stopWatching();
        }
        if (outcome == null || !decideAndWait(outcome)) {
            return false; // a null outcome: shutting down, the task keeps running
        }
        return supervise(driver, null, false);
    }

    /** What follows the run's end ({@link RestartStep}); false when the task is done for good. */
    private boolean decideAndWait(Outcome outcome) throws InterruptedException {
        return restartStep.next(definition.tracker(), outcome, runEnd.takeFailureCause());
    }
}
