package dev.drover.devices;

import dev.drover.api.v1alpha1.DeviceRequest;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.deviceplugin.DevicePluginException;
import dev.drover.deviceplugin.Reservation;
import dev.drover.deviceplugin.nvidia.NvidiaReservations;
import dev.drover.devices.cdi.CdiException;
import dev.drover.devices.cdi.CdiRegistry;
import dev.drover.driver.TaskDeviceNode;
import dev.drover.driver.TaskMount;
import dev.drover.state.DeviceReservation;
import dev.drover.taskrunner.TaskHookContext;
import dev.drover.taskrunner.TaskHookException;
import dev.drover.taskrunner.TaskPrestartHook;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

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
 *
 * <p>The reservation's device nodes, mounts and CDI device names go to the driver in
 * the task's attachments; a container driver gives the container what the host's CDI
 * specs list for those names. For a task of such a driver the names are resolved here
 * first, so that a device no spec describes fails the start as a {@code SetupFailure}
 * saying so, before its image is pulled.
 */
public final class DeviceReservationHook implements TaskPrestartHook {

    private final DeviceLedger ledger;
    private final DeviceManager devices;
    private final CdiRegistry cdi;
    private final Set<String> cdiDrivers;

    /** For agents that run no containers: CDI names are passed on, never resolved here. */
    public DeviceReservationHook(DeviceLedger ledger, DeviceManager devices) {
        this(ledger, devices, new CdiRegistry(List.of(), Set.of()), Set.of());
    }

    /**
     * @param cdi        the node's CDI specs
     * @param cdiDrivers the drivers that give their tasks devices by CDI ({@code oci})
     */
    public DeviceReservationHook(DeviceLedger ledger, DeviceManager devices, CdiRegistry cdi, Set<String> cdiDrivers) {
        this.ledger = ledger;
        this.devices = devices;
        this.cdi = cdi;
        this.cdiDrivers = Set.copyOf(cdiDrivers);
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
            attach(ctx, r);
        } catch (DevicePluginException e) {
            throw new TaskHookException(TaskEventType.SetupFailure, "cannot reserve devices: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TaskHookException(TaskEventType.SetupFailure, "interrupted while reserving devices", e);
        }
    }

    private void attach(TaskHookContext ctx, Reservation r) throws TaskHookException {
        for (Reservation.DeviceNode d : r.deviceNodes()) {
            ctx.attachments().deviceNode(new TaskDeviceNode(d.taskPath(), d.hostPath(), d.permissions()));
        }
        for (Reservation.Mount m : r.mounts()) {
            ctx.attachments().mount(new TaskMount(Path.of(m.hostPath()), m.taskPath(), m.readOnly()));
        }
        r.cdiDevices().forEach(ctx.attachments()::cdiDevice);
        if (cdiDrivers.contains(ctx.task().getDriver()) && !r.cdiDevices().isEmpty()) {
            try {
                cdi.resolve(r.cdiDevices());
            } catch (CdiException e) {
                throw new TaskHookException(
                        TaskEventType.SetupFailure, "cannot give the container its devices: " + e.getMessage(), e);
            }
        }
    }
}
