package dev.drover.allocrunner;

import dev.drover.driver.DriverRegistry;
import dev.drover.state.StateDB;
import dev.drover.taskrunner.TaskPrestartHook;
import dev.drover.taskrunner.TaskRunnerConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.random.RandomGenerator;

/**
 * What every alloc runner on this agent shares. What differs per runner (where it reports its state, where its
 * previous allocation is found) its creator gives it.
 *
 * @param allocHooks extra alloc hooks (each implements one or more {@link AllocHooks} phases), run after Drover's own
 */
public record AllocRunnerConfig(Path dataDir, DriverRegistry drivers, List<TaskPrestartHook> extraPrestartHooks,
                                List<AllocHooks.Hook> allocHooks,
                                StateDB stateDB,
                                InstantSource clock,
                                RandomGenerator random, Duration maxKillTimeout, Duration driverDeadline,
                                TaskRunnerConfig.StopRetry stopRetry) {

    /**
     * How long one destroy waits for its kills: a task's shutdown delay and kill timeout (each capped by
     * {@code maxKillTimeout}) and the driver's deadline. A task still alive then is not given up on: a later destroy
     * looks again.
     */
    public Duration destroyDeadline() {
        return maxKillTimeout.multipliedBy(2).plus(driverDeadline);
    }
}
