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
 * Reserves the devices a task asks for before each start: the same instances
 * every time (the reservation is stored), and the plugin's environment (for
 * NVIDIA GPUs {@code CUDA_VISIBLE_DEVICES} and {@code NVIDIA_VISIBLE_DEVICES})
 * added to the task's. A task given no NVIDIA GPU gets both set to show none,
 * so that it cannot use GPUs reserved for others by accident. It runs after the
 * task's own {@code env} is applied: a task cannot change these. A request
 * that healthy free instances cannot satisfy fails the task's setup for good.
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

    @Override
    public void prestart(TaskHookContext ctx) throws TaskHookException {
        if (ctx.task().getResources() == null
                || ctx.task().getResources().getDevices() == null
                || ctx.task().getResources().getDevices().isEmpty()) {
            ctx.env().putAll(NvidiaReservations.noneVisible());
            return;
        }
        List<DeviceRequest> requests = ctx.task().getResources().getDevices();
        List<DeviceReservation> mine;
        try {
            mine = ledger.claim(ctx.allocId(), ctx.task().getName(), requests);
        } catch (DeviceLedger.Unsatisfiable e) {
            throw new TaskHookException(TaskEventType.SetupFailure, e.getMessage());
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
