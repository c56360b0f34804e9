package dev.drover.taskrunner.hooks;

import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.common.UserText;
import dev.drover.driver.DriverRegistry;
import dev.drover.taskrunner.TaskHookContext;
import dev.drover.taskrunner.TaskHookException;
import dev.drover.taskrunner.TaskPrestartHook;
import java.util.List;

/**
 * Refuses a task whose driver is unknown or disabled, or whose driver config is invalid. A definition that passed is
 * not checked again at the task's next start (a restarting task would parse its config at every restart); a changed
 * spec brings a new definition, which is.
 */
public final class ValidateHook implements TaskPrestartHook {

    private final DriverRegistry drivers;
    /** The definition (its instance) that passed last. */
    private volatile Task valid;

    public ValidateHook(DriverRegistry drivers) {
        this.drivers = drivers;
    }

    @Override
    public String name() {
        return "validate";
    }

    @Override
    public void prestart(TaskHookContext ctx) throws TaskHookException {
        if (ctx.task() == valid) {
            return;
        }
        String driver = ctx.task().getDriver();
        List<String> problems = drivers.unavailable(driver)
                .map(List::of)
                .orElseGet(() ->
                        drivers.find(driver).orElseThrow().validate(ctx.task().effectiveConfig()));
        if (!problems.isEmpty()) {
            throw new TaskHookException(TaskEventType.FailedValidation, UserText.join(problems, "; "));
        }
        valid = ctx.task();
    }
}
