package dev.drover.taskrunner;

import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.Task;
import dev.drover.driver.TaskConfig;
import dev.drover.state.AllocId;
import java.time.Clock;

/** A prestart hook's context for tests of hooks outside this package, and the driver's view once they ran. */
public final class TaskHookContexts {

    private TaskHookContexts() {}

    public static TaskHookContext of(AllocId alloc, Task task, AllocationSpec spec, TaskConfig template) {
        return new TaskHookContext(alloc, task, spec, template, Clock.systemUTC(), e -> {});
    }

    public static TaskConfig taskConfig(TaskHookContext ctx) {
        return ctx.taskConfig();
    }
}
