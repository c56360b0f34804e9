package dev.drover.devices;

import dev.drover.api.v1alpha1.DeviceRequest;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.deviceplugin.DevicePluginException;
import dev.drover.deviceplugin.Reservation;
import dev.drover.deviceplugin.nvidia.NvidiaReservations;
import dev.drover.state.DeviceReservation;
import dev.drover.taskrunner.TaskHookContext;
import dev.drover.taskrunner.TaskHookException;
import dev.drover.taskrunner.TaskPrestartHook;
import java.util.List;

/**
 * Hands a task, before each start, the device instances admission reserved for
 * it when its allocation was admitted ({@link DeviceLedger#reserve}): the same
 * instances every time (the reservation is stored), and the plugin's environment
 * (for NVIDIA GPUs {@code CUDA_VISIBLE_DEVICES} and {@code NVIDIA_VISIBLE_DEVICES})
 * added to the task's. It reserves nothing itself: an allocation whose devices
 * do not fit is refused at admission, before anything of it starts. A task
 * given no NVIDIA GPU gets both set to show none, so that it cannot use GPUs
 * reserved for others by accident. It runs after the task's own {@code env} is
 * applied: a task cannot change these.
 */
public final class DeviceReservationHook implements TaskPrestartHook {

    private final DeviceLedger ledger;
    private final DeviceManager devices;

    public DeviceReservationHook(DeviceLedger ledger, DeviceManager devices) {
        this.ledger = ledger;
        this.devices = devices;
    }

    @Override
    public String name() {
        return "devices";
    }

    /** Why a task that asks for devices has none reserved. */
    static String unreserved(List<DeviceRequest> requests) {
        StringBuilder why = new StringBuilder();
        for (DeviceRequest r : requests) {
            why.append(why.isEmpty() ? "" : "; ")
                    .append("device ")
                    .append(r.getName())
                    .append(": asked ")
                    .append(r.effectiveCount())
                    .append(", none reserved for this task");
        }
        return why + " (its allocation was admitted by an earlier agent that reserved devices as tasks started, and"
                + " no instance was free when this agent restored it): create the allocation again";
    }

    @Override
    public void prestart(TaskHookContext ctx) throws TaskHookException {
        if (ctx.task().getResources() == null
                || ctx.task().getResources().getDevices() == null
                || ctx.task().getResources().getDevices().isEmpty()) {
            ctx.env().putAll(NvidiaReservations.noneVisible());
            return;
        }
        List<DeviceReservation> mine = ledger.reserved(ctx.allocId(), ctx.task().getName());
        if (mine.isEmpty()) {
            // only an allocation restored from an agent that reserved at each task's start, with none free since
            throw new TaskHookException(
                    TaskEventType.SetupFailure,
                    unreserved(ctx.task().getResources().getDevices()));
        }
        try {
            Reservation r =
                    devices.reserve(mine.stream().flatMap(d -> d.ids().stream()).toList());
            ctx.env().putAll(r.env());
            if (!r.env().containsKey(NvidiaReservations.CUDA_VISIBLE_DEVICES)) {
                ctx.env().putAll(NvidiaReservations.noneVisible());
            }
        } catch (DevicePluginException e) {
            throw new TaskHookException(TaskEventType.SetupFailure, "cannot reserve devices: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TaskHookException(TaskEventType.SetupFailure, "interrupted while reserving devices", e);
        }
    }
}
