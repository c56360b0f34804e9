package dev.drover.taskrunner.hooks;

import dev.drover.driver.TaskConfig;
import dev.drover.taskrunner.TaskHookContext;
import dev.drover.taskrunner.TaskPrestartHook;
import java.util.Map;

/**
 * Drover's variables first, then the task's own {@code env} (which may override them), with the values read for its
 * {@code valueFrom} entries.
 */
public final class EnvHook implements TaskPrestartHook {

    @Override
    public String name() {
        return "env";
    }

    @Override
    public void prestart(TaskHookContext ctx) {
        TaskConfig t = ctx.paths();
        Map<String, String> env = ctx.env();
        env.put("DROVER_ALLOC_NAME", ctx.allocId().name());
        env.put("DROVER_ALLOC_NAMESPACE", ctx.allocId().namespace());
        env.put("DROVER_TASK_NAME", ctx.task().getName());
        env.put("DROVER_ALLOC_DIR", t.allocDir().toString());
        env.put("DROVER_TASK_DIR", t.taskDir().toString());
        env.put("DROVER_SECRETS_DIR", t.secretsDir().toString());
        env.putAll(ctx.task().effectiveEnv(ctx.valuesFrom()));
    }
}
