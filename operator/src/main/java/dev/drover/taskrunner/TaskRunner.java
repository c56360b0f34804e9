package dev.drover.taskrunner;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.api.v1alpha1.TaskState;
import dev.drover.driver.Deadlines;
import dev.drover.driver.Driver;
import dev.drover.driver.DriverStartException;
import dev.drover.driver.ExitResult;
import dev.drover.driver.TaskConfig;
import dev.drover.driver.TaskHandle;
import dev.drover.state.TaskLocalState;
import dev.drover.taskrunner.restarts.Outcome;
import dev.drover.taskrunner.restarts.RestartDecision;
import dev.drover.taskrunner.restarts.RestartTracker;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one task for as long as its allocation wants it: starts it through its
 * driver, waits for it, asks the restart tracker what next, waits the restart
 * delay, and records every step as a task event. Plain blocking code on one
 * virtual thread; {@link #kill}, {@link #restart} and {@link #shutdown} talk to
 * it through futures. Every wait on the driver has a deadline.
 */
public final class TaskRunner {

    private static final Logger LOG = LoggerFactory.getLogger(TaskRunner.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final TaskRunnerConfig cfg;
    private final Task task;
    private final String name;
    private final RestartTracker tracker;
    private final TaskStateRecorder recorder;
    private final CompletableFuture<TaskEvent> killRequest = new CompletableFuture<>();
    private final CompletableFuture<Void> shutdownRequest = new CompletableFuture<>();
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    private volatile CompletableFuture<String> restartRequest = new CompletableFuture<>();
    private TaskLocalState local;
    private TaskHandle restoredHandle;
    private Thread thread;

    /** A runner for a task not started before. */
    public TaskRunner(TaskRunnerConfig cfg) {
        this(cfg, new TaskStateRecorder(), TaskLocalState.initial(cfg.task().getDriver()));
        event(TaskEvent.of(TaskEventType.Received, cfg.clock().instant()).withMessage("Task received by client"));
    }

    private TaskRunner(TaskRunnerConfig cfg, TaskStateRecorder recorder, TaskLocalState local) {
        this.cfg = cfg;
        this.task = cfg.task();
        this.name = task.getName();
        this.recorder = recorder;
        this.local = local;
        this.tracker = new RestartTracker(task.effectiveRestartPolicy(cfg.spec()), cfg.spec().effectiveType(),
                task.hook(), task.isSidecar(), cfg.clock(), cfg.random());
    }

    /**
     * A runner rebuilt from the store after an agent restart. A task that was
     * running is reattached (no new Started); one that is dead stays dead.
     */
    public static TaskRunner restore(TaskRunnerConfig cfg, TaskState stored, TaskLocalState local) {
        TaskRunner r = new TaskRunner(cfg, new TaskStateRecorder(stored), local);
        if (local.driverHandle() != null && stored.getState() == TaskState.State.Running) {
            r.restoredHandle = Handles.fromStored(local.driverHandle());
        }
        return r;
    }

    public String name() {
        return name;
    }

    public Task task() {
        return task;
    }

    /** Starts the runner's thread; returns at once. */
    public synchronized void run() {
        if (thread != null) {
            return;
        }
        if (recorder.state() == TaskState.State.Dead) {
            done.complete(null);
            return;
        }
        thread = Thread.ofVirtual().name("task-" + cfg.allocId() + "/" + name).start(this::loop);
    }

    /**
     * Kills the task: {@code cause} (e.g. a LeaderTaskDead event) is recorded first,
     * then the kill follows SEMANTICS.md. Returns when the runner is done.
     */
    public CompletableFuture<Void> kill(TaskEvent cause) {
        killRequest.complete(cause);
        synchronized (this) {
            if (thread == null && !done.isDone()) {
                // Never started (e.g. a main task behind a failed prestart): it just ends, never run.
                if (cause != null) {
                    event(cause);
                }
                recorder.dead(cfg.clock().instant(), false);
                publish(null);
                done.complete(null);
            }
        }
        return done;
    }

    /** Restarts a running task now, without counting against its policy (e.g. its spec changed). */
    public void restart(String reason) {
        restartRequest.complete(reason);
    }

    /** Stops the runner but leaves the task running, for an agent that is shutting down. Joins the thread. */
    public void shutdown() throws InterruptedException {
        shutdownRequest.complete(null);
        Thread t;
        synchronized (this) {
            t = thread;
        }
        if (t != null) {
            t.join();
        }
    }

    /** Completes when the task is dead and the runner has stopped (or was shut down). */
    public CompletableFuture<Void> done() {
        return done;
    }

    public synchronized TaskState state() {
        return recorder.snapshot();
    }

    private void loop() {
        try {
            Driver driver = validate();
            if (driver != null) {
                supervise(driver);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            LOG.error("task runner {}/{} failed", cfg.allocId(), name, e);
            event(TaskEvent.of(TaskEventType.DriverFailure, cfg.clock().instant())
                    .withDriverError("internal error: " + e));
            markDead(true);
        } finally {
            done.complete(null);
        }
    }

    /** The driver to use, or null after a FailedValidation. */
    private Driver validate() {
        Optional<String> unavailable = cfg.drivers().unavailable(task.getDriver());
        List<String> problems = unavailable.map(List::of)
                .orElseGet(() -> cfg.drivers().find(task.getDriver()).orElseThrow().validate(task.effectiveConfig()));
        if (!problems.isEmpty()) {
            String error = String.join("; ", problems);
            event(TaskEvent.of(TaskEventType.FailedValidation, cfg.clock().instant()).withValidationError(error)
                    .withMessage(error));
            markDead(true);
            return null;
        }
        return cfg.drivers().find(task.getDriver()).orElseThrow();
    }

    private void supervise(Driver driver) throws InterruptedException {
        TaskHandle handle = restoredHandle != null ? reattach(driver) : null;
        while (true) {
            Outcome outcome;
            if (handle == null) {
                if (killRequest.isDone()) {
                    markDead(false);
                    return;
                }
                try {
                    handle = start(driver);
                } catch (DriverStartException e) {
                    event(TaskEvent.of(TaskEventType.DriverFailure, cfg.clock().instant()).withDriverError(e.getMessage())
                            .withMessage(e.getMessage()));
                    outcome = new Outcome.StartFailed(e.getMessage(), e.recoverable());
                    if (!decideAndWait(outcome)) {
                        return;
                    }
                    continue;
                }
            }
            outcome = watch(driver, handle);
            if (outcome == null) {
                return; // shutting down: the task keeps running
            }
            handle = null;
            if (!decideAndWait(outcome)) {
                return;
            }
        }
    }

    private TaskHandle reattach(Driver driver) {
        try {
            TaskHandle h = Deadlines.call("reattaching to " + name, cfg.driverDeadline(), () -> driver.recover(restoredHandle));
            LOG.info("reattached to task {}/{}", cfg.allocId(), name);
            return h;
        } catch (Exception e) {
            String why = e instanceof ExecutionException ee && ee.getCause() != null ? ee.getCause().getMessage() : e.getMessage();
            event(TaskEvent.of(TaskEventType.FailedRestoringTask, cfg.clock().instant())
                    .withMessage("could not reattach to the task: " + why));
            return null;
        }
    }

    private TaskHandle start(Driver driver) throws DriverStartException, InterruptedException {
        if (!local.hookDone("taskdir")) {
            event(TaskEvent.of(TaskEventType.TaskSetup, cfg.clock().instant()).withMessage("Building Task Directory"));
            buildTaskDir();
            local = local.withHookDone("taskdir");
        }
        TaskConfig config = taskConfig();
        TaskHandle handle;
        try {
            handle = Deadlines.call("starting " + name, cfg.driverDeadline(), () -> driver.start(config));
        } catch (ExecutionException e) {
            if (e.getCause() instanceof DriverStartException d) {
                throw d;
            }
            throw new DriverStartException("driver failed: " + e.getCause(), true, e.getCause());
        } catch (Deadlines.DeadlineExceeded e) {
            throw new DriverStartException(e.getMessage(), true);
        }
        synchronized (this) {
            local = local.withDriverHandle(Handles.toStored(handle));
            recorder.running(cfg.clock().instant());
        }
        event(TaskEvent.of(TaskEventType.Started, cfg.clock().instant()).withMessage("Task started by client"));
        return handle;
    }

    /** Waits for the task to exit, be killed, be restarted on request, or for shutdown. Null on shutdown. */
    private Outcome watch(Driver driver, TaskHandle handle) throws InterruptedException {
        CompletableFuture<ExitResult> exit = driver.exit(handle);
        CompletableFuture<String> restart = restartRequest;
        CompletableFuture.anyOf(exit, killRequest, shutdownRequest, restart).exceptionally(t -> null).join();
        if (killRequest.isDone() && !exit.isDone()) {
            TaskEvent cause = killRequest.join();
            if (cause != null) {
                event(cause);
            }
            killTask(driver, handle, exit);
            return new Outcome.Killed();
        }
        if (exit.isDone()) {
            ExitResult r = exitResult(exit);
            event(TaskEvent.of(TaskEventType.Terminated, cfg.clock().instant()).withExit(r.exitCode(), r.signal())
                    .withMessage(r.error() != null ? r.error() : "Exit Code: " + r.exitCode()
                            + (r.signal() == null ? "" : ", Signal: " + r.signal())));
            destroy(driver, handle);
            return new Outcome.Exited(r.exitCode(), r.signal(), r.error());
        }
        if (restart.isDone()) {
            restartRequest = new CompletableFuture<>();
            event(TaskEvent.of(TaskEventType.RestartSignaled, cfg.clock().instant()).withRestartReason(restart.join())
                    .withMessage(restart.join()));
            killTask(driver, handle, exit);
            return new Outcome.RestartRequested(false);
        }
        persist(null);
        return null;
    }

    private void killTask(Driver driver, TaskHandle handle, CompletableFuture<ExitResult> exit)
            throws InterruptedException {
        Duration delay = task.effectiveShutdownDelay();
        if (delay.isPositive()) {
            event(TaskEvent.of(TaskEventType.WaitingShutdownDelay, cfg.clock().instant())
                    .withMessage("Waiting for shutdown delay of " + dev.drover.api.Durations.format(delay)));
            try {
                exit.get(delay.toNanos(), TimeUnit.NANOSECONDS);
            } catch (TimeoutException | ExecutionException expected) {
                // the delay passed (or the wait failed): kill now
            }
        }
        Duration timeout = min(task.effectiveKillTimeout(), cfg.maxKillTimeout());
        event(TaskEvent.of(TaskEventType.Killing, cfg.clock().instant()).withKillTimeout(timeout)
                .withMessage("Sent interrupt. Waiting " + dev.drover.api.Durations.format(timeout) + " before force killing"));
        String killError = null;
        if (!exit.isDone()) {
            killError = stopWithRetries(driver, handle, timeout);
        }
        TaskEvent killed = TaskEvent.of(TaskEventType.Killed, cfg.clock().instant()).withMessage("Task successfully killed");
        if (killError != null) {
            killed.withKillError(killError).withMessage("Task could not be killed: " + killError);
        }
        event(killed);
        destroy(driver, handle);
    }

    /** Null when the task is dead; otherwise the last error, after every retry failed. */
    private String stopWithRetries(Driver driver, TaskHandle handle, Duration timeout) throws InterruptedException {
        List<Duration> backoff = cfg.stopRetry().backoff();
        String error = null;
        for (int attempt = 0; attempt <= backoff.size(); attempt++) {
            try {
                Deadlines.call("stopping " + name, timeout.plus(cfg.driverDeadline()), () -> {
                    driver.stop(handle, timeout, task.effectiveKillSignal());
                    return null;
                });
                Deadlines.await("waiting for " + name + " to exit", cfg.driverDeadline(), driver.exit(handle));
                return null;
            } catch (Deadlines.DeadlineExceeded | ExecutionException e) {
                error = e instanceof ExecutionException ee && ee.getCause() != null ? ee.getCause().getMessage() : e.getMessage();
                LOG.warn("stopping task {}/{} failed (attempt {}): {}", cfg.allocId(), name, attempt + 1, error);
            }
            if (attempt < backoff.size()) {
                Thread.sleep(backoff.get(attempt));
            }
        }
        return error;
    }

    /** Asks the tracker; records the decision; waits a restart's delay. False when the task is done for good. */
    private boolean decideAndWait(Outcome outcome) throws InterruptedException {
        RestartDecision d = tracker.decide(outcome);
        switch (d.kind()) {
            case RESTART -> {
                event(TaskEvent.of(TaskEventType.Restarting, cfg.clock().instant()).withStartDelay(d.delay())
                        .withRestartReason(d.reason()).withMessage(d.reason()));
                synchronized (this) {
                    recorder.pending();
                }
                publish(null);
                try {
                    CompletableFuture.anyOf(killRequest, shutdownRequest).get(d.delay().toNanos(), TimeUnit.NANOSECONDS);
                } catch (TimeoutException delayPassed) {
                    return true;
                } catch (ExecutionException impossible) {
                    throw new IllegalStateException(impossible);
                }
                if (shutdownRequest.isDone() && !killRequest.isDone()) {
                    persist(null);
                    return false;
                }
                markDead(false); // killed while waiting to restart: nothing runs, nothing to kill
                return false;
            }
            case NOT_RESTARTING -> {
                event(TaskEvent.of(TaskEventType.NotRestarting, cfg.clock().instant()).withRestartReason(d.reason())
                        .withMessage(d.reason()));
                markDead(true);
                return false;
            }
            default -> {
                markDead(false);
                return false;
            }
        }
    }

    private void markDead(boolean failed) {
        synchronized (this) {
            recorder.dead(cfg.clock().instant(), failed);
            local = local.withDriverHandle(null);
        }
        publish(null);
    }

    private void event(TaskEvent e) {
        synchronized (this) {
            recorder.event(e);
        }
        publish(e);
    }

    private void publish(TaskEvent e) {
        TaskState snapshot = persist(e);
        cfg.listener().taskStateChanged(name, snapshot, e);
    }

    private TaskState persist(TaskEvent e) {
        TaskState snapshot;
        TaskLocalState localNow;
        synchronized (this) {
            snapshot = recorder.snapshot();
            localNow = local;
        }
        cfg.stateDB().putTaskLocalState(cfg.allocId(), name, localNow);
        cfg.stateDB().putTaskState(cfg.allocId(), name, JSON.valueToTree(snapshot));
        return snapshot;
    }

    private TaskConfig taskConfig() {
        TaskConfig t = cfg.template();
        Map<String, String> env = new LinkedHashMap<>();
        env.put("DROVER_ALLOC_NAME", cfg.allocId().name());
        env.put("DROVER_ALLOC_NAMESPACE", cfg.allocId().namespace());
        env.put("DROVER_TASK_NAME", name);
        env.put("DROVER_ALLOC_DIR", t.allocDir().toString());
        env.put("DROVER_TASK_DIR", t.taskDir().toString());
        env.put("DROVER_SECRETS_DIR", t.secretsDir().toString());
        env.putAll(task.effectiveEnv());
        return new TaskConfig(t.namespace(), t.allocName(), name, task.effectiveConfig(), env, t.allocDir(),
                t.taskDir(), t.logsDir(), t.secretsDir());
    }

    private void buildTaskDir() {
        TaskConfig t = cfg.template();
        try {
            for (Path dir : List.of(t.taskDir(), t.taskDir().resolve("local"), t.taskDir().resolve("tmp"), t.logsDir())) {
                Files.createDirectories(dir);
            }
            Files.createDirectories(t.secretsDir());
            Files.setPosixFilePermissions(t.secretsDir(), PosixFilePermissions.fromString("rwx------"));
        } catch (IOException e) {
            throw new IllegalStateException("could not build the task directory " + t.taskDir() + ": " + e.getMessage(), e);
        }
    }

    private static ExitResult exitResult(CompletableFuture<ExitResult> exit) {
        try {
            return exit.join();
        } catch (RuntimeException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            return new ExitResult(-1, null, "lost track of the task: " + cause.getMessage());
        }
    }

    private void destroy(Driver driver, TaskHandle handle) {
        try {
            Deadlines.call("cleaning up " + name, cfg.driverDeadline(), () -> {
                driver.destroy(handle);
                return null;
            });
        } catch (Exception e) {
            LOG.warn("cleaning up task {}/{} failed: {}", cfg.allocId(), name, e.toString());
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    /** Driver handles as the state store keeps them: a flat map of strings. */
    static final class Handles {
        private Handles() {
        }

        static Map<String, String> toStored(TaskHandle h) {
            Map<String, String> m = new HashMap<>(h.state());
            m.put("@driver", h.driver());
            m.put("@taskId", h.taskId());
            m.put("@startedAt", h.startedAt().toString());
            return m;
        }

        static TaskHandle fromStored(Map<String, String> m) {
            Map<String, String> state = new HashMap<>(m);
            String driver = state.remove("@driver");
            String taskId = state.remove("@taskId");
            String startedAt = state.remove("@startedAt");
            return new TaskHandle(driver, taskId, java.time.Instant.parse(startedAt), state);
        }
    }
}
