package dev.drover.driver;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Runs tasks of one kind ({@code mock}, {@code raw_exec}). Drivers are not
 * trusted: the task runner bounds every call it waits on with its own deadline
 * (see {@link Deadlines}), so a driver that hangs cannot hang a runner.
 */
public interface Driver extends AutoCloseable {

    /** The name tasks use in {@code spec.tasks[].driver}. */
    String name();

    /**
     * Checks a task's {@code config} strictly: unknown keys are errors, not
     * ignored. Returns one message per problem, each naming the key
     * ({@code config.runFor: ...}); empty when the config is valid.
     */
    List<String> validate(Map<String, Object> config);

    /**
     * Readies what the task needs before it starts, for as long as that takes (the oci driver fetches its image):
     * called before each {@link #start}, under a bound of its own ({@link #PREPARE_DEADLINE}), so a start's own
     * deadline is for starting alone. Nothing to do by default.
     */
    default void prepare(TaskConfig task) throws DriverStartException {}

    /** How long {@link #prepare} may take: an image of some gigabytes over a slow link. */
    Duration PREPARE_DEADLINE = Duration.ofMinutes(30);

    /** Starts the task; returns once it runs. */
    TaskHandle start(TaskConfig task) throws DriverStartException;

    /** Completes when the task exits, however it exits. */
    CompletableFuture<ExitResult> exit(TaskHandle handle);

    /**
     * Sends {@code signal}, and kills the task outright if it is still running
     * after {@code timeout}. Returns once the task has exited.
     */
    void stop(TaskHandle handle, Duration timeout, String signal) throws DriverException;

    /**
     * Sends {@code signal} (a canonical name, {@code SIGHUP}) to the task's own process, which lives on unless the
     * signal ends it; what the process does with it is its business. Returns once the signal is sent.
     *
     * @throws TaskNotRunningException when the task has exited (or its process is another one now)
     * @throws DriverException         when the signal could not be sent
     */
    void signal(TaskHandle handle, String signal) throws DriverException;

    /**
     * Starts {@code request}'s command inside the running task, in its confinement: its user, directory and
     * environment, and for a confined driver its namespaces and cgroup. Returns once the command runs; the caller
     * reads its output, waits for its exit and closes it.
     *
     * @throws TaskNotRunningException when the task has exited (or its process is another one now)
     * @throws DriverException         when the command could not be started, or this driver cannot run commands in
     *                                 its tasks
     */
    default ExecProcess exec(TaskHandle handle, ExecRequest request) throws DriverException {
        throw new DriverException("driver " + name() + " cannot run commands inside its tasks");
    }

    /** Releases what the driver holds for a task that has exited. */
    void destroy(TaskHandle handle);

    /**
     * Reattaches to a task started by an earlier agent process, from the handle
     * that process stored. The task keeps running; its exit is reported as usual.
     */
    TaskHandle recover(TaskHandle handle) throws DriverException;

    /**
     * A task an earlier agent process started for {@code task} but died before storing its handle, still
     * running, reattached as {@link #recover} would; empty when there is none. Only drivers whose tasks outlive
     * the agent can have one.
     */
    default Optional<TaskHandle> findUnrecorded(TaskConfig task) throws DriverException {
        return Optional.empty();
    }

    /** Resource usage of a running task. */
    TaskStats stats(TaskHandle handle) throws DriverException;

    /** Stops the driver's own threads; running tasks are left alone. */
    @Override
    void close();
}
