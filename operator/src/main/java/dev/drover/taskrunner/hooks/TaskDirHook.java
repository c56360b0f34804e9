package dev.drover.taskrunner.hooks;

import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.driver.TaskConfig;
import dev.drover.taskrunner.TaskHookContext;
import dev.drover.taskrunner.TaskHookException;
import dev.drover.taskrunner.TaskPrestartHook;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;

/** Builds the task's directory: {@code local/}, {@code tmp/}, and {@code secrets/} readable by its owner only. */
public final class TaskDirHook implements TaskPrestartHook {

    @Override
    public String name() {
        return "taskdir";
    }

    @Override
    public boolean runOnce() {
        return true;
    }

    @Override
    public void prestart(TaskHookContext ctx) throws TaskHookException {
        ctx.event(TaskEvent.of(TaskEventType.TaskSetup, ctx.clock().instant()).withMessage("Building Task Directory"));
        TaskConfig t = ctx.paths();
        try {
            for (Path dir : List.of(t.taskDir(), t.taskDir().resolve("local"), t.taskDir().resolve("tmp"))) {
                Files.createDirectories(dir);
            }
            Files.createDirectories(t.secretsDir());
            Files.setPosixFilePermissions(t.secretsDir(), PosixFilePermissions.fromString("rwx------"));
        } catch (IOException e) {
            throw new TaskHookException(TaskEventType.SetupFailure,
                    "could not build the task directory " + t.taskDir() + ": " + e.getMessage(), e);
        }
    }
}
