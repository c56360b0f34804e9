package dev.drover.taskrunner.hooks;

import dev.drover.driver.DriverRegistry;
import dev.drover.taskrunner.TaskPrestartHook;
import java.util.ArrayList;
import java.util.List;

/**
 * The prestart hooks every task gets, in order, followed by any the agent adds (device reservation). The task's
 * credentials come before its environment, which holds the values they read.
 */
public final class TaskHooks {

    private TaskHooks() {}

    public static List<TaskPrestartHook> defaults(
            DriverRegistry drivers,
            TaskDirHook.TaskDirs dirs,
            TaskPrestartHook credentials,
            List<TaskPrestartHook> extra) {
        List<TaskPrestartHook> hooks = new ArrayList<>(
                List.of(new ValidateHook(drivers), new TaskDirHook(dirs), new LogsHook(), credentials, new EnvHook()));
        hooks.addAll(extra);
        return List.copyOf(hooks);
    }
}
