package dev.drover.allocrunner;

import dev.drover.state.StateDB;
import dev.drover.taskrunner.TaskPrestartHook;
import dev.drover.taskrunner.TaskRunnerConfig;
import dev.drover.taskrunner.checks.CheckProber;
import dev.drover.taskrunner.identity.WorkloadIdentity;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;

/**
 * What every alloc runner on this agent shares. What differs per runner (where it reports its state, where its
 * previous allocation is found) its creator gives it.
 *
 * @param tasks      what every task runner is given, passed on unchanged
 * @param allocHooks extra alloc hooks (each implements one or more {@link AllocHooks} phases), run after Drover's own
 * @param identity   where tasks' tokens, Secrets and ConfigMaps come from; null for an agent without an API server (a
 *                   task that refers to a Secret or ConfigMap then fails its setup, and no task gets a token)
 * @param checks     probes the tasks' checks, for the whole agent; null for runners whose tasks' checks are not run
 *                   (their status then never says they pass)
 * @param networks   the allocations' ports and networks of their own ({@link NetworkSetup#HOST_ONLY}: none)
 */
public record AllocRunnerConfig(
        Path dataDir,
        TaskRunnerConfig.Shared tasks,
        List<TaskPrestartHook> extraPrestartHooks,
        List<AllocHooks.Hook> allocHooks,
        WorkloadIdentity identity,
        CheckProber checks,
        NetworkSetup networks) {

    /** Runners whose allocations have the host's network only. */
    public AllocRunnerConfig(
            Path dataDir,
            TaskRunnerConfig.Shared tasks,
            List<TaskPrestartHook> extraPrestartHooks,
            List<AllocHooks.Hook> allocHooks,
            WorkloadIdentity identity,
            CheckProber checks) {
        this(dataDir, tasks, extraPrestartHooks, allocHooks, identity, checks, NetworkSetup.HOST_ONLY);
    }

    /** Runners whose tasks' checks are not run. */
    public AllocRunnerConfig(
            Path dataDir,
            TaskRunnerConfig.Shared tasks,
            List<TaskPrestartHook> extraPrestartHooks,
            List<AllocHooks.Hook> allocHooks,
            WorkloadIdentity identity) {
        this(dataDir, tasks, extraPrestartHooks, allocHooks, identity, null);
    }

    /** Runners whose tasks get no credentials. */
    public AllocRunnerConfig(
            Path dataDir,
            TaskRunnerConfig.Shared tasks,
            List<TaskPrestartHook> extraPrestartHooks,
            List<AllocHooks.Hook> allocHooks) {
        this(dataDir, tasks, extraPrestartHooks, allocHooks, null, null);
    }

    public StateDB stateDB() {
        return tasks.stateDB();
    }

    public InstantSource clock() {
        return tasks.clock();
    }

    /**
     * How long one destroy waits for its kills: a task's shutdown delay and kill timeout (each capped by
     * {@code maxKillTimeout}) and the driver's deadline. A task still alive then is not given up on: a later destroy
     * looks again.
     */
    public Duration destroyDeadline() {
        return tasks.maxKillTimeout().multipliedBy(2).plus(tasks.driverDeadline());
    }
}
