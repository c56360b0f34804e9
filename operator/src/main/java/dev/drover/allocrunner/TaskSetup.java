package dev.drover.allocrunner;

import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.Task;
import dev.drover.driver.TaskConfig;
import dev.drover.state.AllocId;
import dev.drover.taskrunner.TaskPrestartHook;
import dev.drover.taskrunner.TaskRunnerConfig;
import dev.drover.taskrunner.TaskRunningHook;
import dev.drover.taskrunner.TaskStateListener;
import dev.drover.taskrunner.checks.TaskChecks;
import dev.drover.taskrunner.hooks.NoCredentialsHook;
import dev.drover.taskrunner.hooks.TaskHooks;
import dev.drover.taskrunner.identity.ImagePullSecrets;
import dev.drover.taskrunner.identity.TaskCredentials;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What one task runner of an allocation is built from: its paths, its hooks, its credentials (an oci task's registry
 * credentials among them), its checks.
 */
final class TaskSetup {

    private TaskSetup() {}

    static TaskRunnerConfig config(
            AllocRunnerConfig cfg,
            AllocId id,
            AllocationSpec spec,
            AllocDir dir,
            Task t,
            TaskStateListener listener,
            TaskPrestartHook network,
            TaskChecks.PortAddresses ports) {
        TaskConfig template = new TaskConfig(
                id.namespace(),
                id.name(),
                t.getName(),
                Map.of(),
                Map.of(),
                dir.shared(),
                dir.taskDir(t.getName()),
                dir.logs(),
                dir.taskSecrets(t.getName()));
        TaskPrestartHook credentials = new NoCredentialsHook();
        List<TaskPrestartHook> extra = new ArrayList<>();
        List<TaskRunningHook> running = new ArrayList<>();
        if (cfg.identity() != null) {
            TaskCredentials c = TaskCredentials.of(cfg.identity(), id, spec, t, dir.taskDir(t.getName()));
            credentials = c;
            running.add(c);
            extra.add(new ImagePullSecrets(cfg.identity()));
        }
        extra.add(network);
        extra.addAll(cfg.extraPrestartHooks());
        if (cfg.checks() != null) {
            running.add(new TaskChecks(
                    cfg.checks(), id.key(), cfg.clock(), ports)); // idle for a run whose definition has no checks
        }
        return new TaskRunnerConfig(
                id,
                spec,
                t,
                template,
                TaskHooks.defaults(cfg.tasks().drivers(), dir::buildTask, credentials, extra),
                List.copyOf(running),
                listener,
                cfg.tasks());
    }
}
