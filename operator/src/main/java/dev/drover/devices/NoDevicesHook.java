package dev.drover.devices;

import dev.drover.api.v1alpha1.DeviceRequest;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.taskrunner.TaskHookContext;
import dev.drover.taskrunner.TaskHookException;
import dev.drover.taskrunner.TaskPrestartHook;
import java.util.List;

/**
 * The device hook of an agent that runs no device plugins. Admission refuses a
 * new allocation that asks for devices there; a task restored from an agent
 * that ran them cannot have its devices either, so its setup fails for good
 * with a message naming each request (docs/semantics.md, Devices), instead of
 * the task running without the devices it needs.
 */
public final class NoDevicesHook implements TaskPrestartHook {

    @Override
    public String name() {
        return "devices";
    }

    @Override
    public void prestart(TaskHookContext ctx) throws TaskHookException {
        if (ctx.task().getResources() == null || ctx.task().getResources().getDevices() == null) {
            return;
        }
        List<DeviceRequest> requests = ctx.task().getResources().getDevices();
        if (requests.isEmpty()) {
            return;
        }
        StringBuilder why = new StringBuilder();
        for (DeviceRequest r : requests) {
            why.append(why.isEmpty() ? "" : "; ")
                    .append("device ")
                    .append(r.getName())
                    .append(": asked ")
                    .append(r.effectiveCount())
                    .append(", 0 free");
        }
        throw new TaskHookException(
                TaskEventType.SetupFailure,
                why + " (this agent runs no device plugins; see --device-plugin in docs/configuration.md)");
    }
}
