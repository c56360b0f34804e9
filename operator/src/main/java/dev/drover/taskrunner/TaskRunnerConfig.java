package dev.drover.taskrunner;

import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.Task;
import dev.drover.driver.DriverRegistry;
import dev.drover.driver.TaskConfig;
import dev.drover.state.AllocId;
import dev.drover.state.StateDB;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.random.RandomGenerator;

/**
 * Everything a task runner is built from: its own task and what it shares with every other task runner.
 *
 * @param template      paths and identity for the driver; its config and env are filled in by the runner
 * @param prestartHooks run in order before each start ({@code TaskHooks.defaults} gives the usual ones)
 * @param runningHooks  begun while the task's process runs, ended when it stops
 * @param shared        the agent's settings, the same for every task runner
 */
public record TaskRunnerConfig(
        AllocId allocId,
        AllocationSpec spec,
        Task task,
        TaskConfig template,
        List<TaskPrestartHook> prestartHooks,
        List<TaskRunningHook> runningHooks,
        TaskStateListener listener,
        Shared shared) {

    public static final Duration DEFAULT_MAX_KILL_TIMEOUT = Duration.ofSeconds(30);
    public static final Duration DEFAULT_DRIVER_DEADLINE = Duration.ofMinutes(1);

    /**
     * What every task runner on the agent is given alike; its alloc runner passes it on unchanged.
     *
     * @param maxKillTimeout the agent's cap on any task's killTimeout, and on its shutdownDelay
     * @param driverDeadline how long a driver may take to start, stop or reattach before the runner gives up on it
     */
    public record Shared(
            DriverRegistry drivers,
            StateDB stateDB,
            InstantSource clock,
            RandomGenerator random,
            Duration maxKillTimeout,
            Duration driverDeadline,
            StopRetry stopRetry) {}

    // The shared settings, read as the runner's own.

    public DriverRegistry drivers() {
        return shared.drivers();
    }

    public StateDB stateDB() {
        return shared.stateDB();
    }

    public InstantSource clock() {
        return shared.clock();
    }

    public RandomGenerator random() {
        return shared.random();
    }

    public Duration maxKillTimeout() {
        return shared.maxKillTimeout();
    }

    public Duration driverDeadline() {
        return shared.driverDeadline();
    }

    public StopRetry stopRetry() {
        return shared.stopRetry();
    }

    /**
     * After which pauses a failed driver stop is tried again: {@code backoff} in order, then its last pause for as
     * long as the task may be alive (every second when {@code backoff} is empty).
     */
    public record StopRetry(List<Duration> backoff) {
        /** docs/semantics.md, Killing a task: 5 s, 20 s, 80 s, 120 s, 120 s. */
        public static final StopRetry DEFAULT = new StopRetry(List.of(
                Duration.ofSeconds(5),
                Duration.ofSeconds(20),
                Duration.ofSeconds(80),
                Duration.ofSeconds(120),
                Duration.ofSeconds(120)));

        private static final Duration WITHOUT_BACKOFF = Duration.ofSeconds(1);

        public StopRetry {
            backoff = List.copyOf(backoff);
        }

        /** The pause after failed try number {@code attempt} (from 0). */
        public Duration pause(int attempt) {
            return backoff.isEmpty() ? WITHOUT_BACKOFF : backoff.get(Math.min(attempt, backoff.size() - 1));
        }
    }
}
