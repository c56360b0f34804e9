package dev.drover.taskrunner.hooks;

import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.taskrunner.TaskHookContext;
import dev.drover.taskrunner.TaskHookException;
import dev.drover.taskrunner.TaskPrestartHook;
import java.io.IOException;

/**
 * Builds the task's directory ({@code local/}, {@code tmp/}, and {@code secrets/}
 * readable by its owner only) through the allocation's directory, which checks
 * names and never follows links.
 */
public final class TaskDirHook implements TaskPrestartHook {

    /** Builds the directories of one task; the alloc runner's {@code AllocDir::buildTask}. */
    @FunctionalInterface
    public interface TaskDirs {
        void build(String task) throws IOException;
    }

    private final TaskDirs dirs;

    public TaskDirHook(TaskDirs dirs) {
        this.dirs = dirs;
    }

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
        try {
            dirs.build(ctx.task().getName());
        } catch (IOException | IllegalArgumentException e) {
            throw new TaskHookException(
                    TaskEventType.SetupFailure,
                    "could not build the task directory " + ctx.paths().taskDir() + ": " + e.getMessage(),
                    e);
        }
    }
}
