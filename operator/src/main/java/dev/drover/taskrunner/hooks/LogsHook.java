package dev.drover.taskrunner.hooks;

import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.taskrunner.TaskHookContext;
import dev.drover.taskrunner.TaskHookException;
import dev.drover.taskrunner.TaskPrestartHook;
import java.io.IOException;
import java.nio.file.Files;

/** Makes sure the alloc's logs directory exists before the task writes its output there. */
public final class LogsHook implements TaskPrestartHook {

    @Override
    public String name() {
        return "logs";
    }

    @Override
    public void prestart(TaskHookContext ctx) throws TaskHookException {
        try {
            Files.createDirectories(ctx.paths().logsDir());
        } catch (IOException e) {
            throw new TaskHookException(
                    TaskEventType.SetupFailure,
                    "could not create the logs directory " + ctx.paths().logsDir() + ": " + e.getMessage(),
                    e);
        }
    }
}
