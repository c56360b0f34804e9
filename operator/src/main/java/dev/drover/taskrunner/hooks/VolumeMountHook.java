package dev.drover.taskrunner.hooks;

import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.api.v1alpha1.Volume;
import dev.drover.common.UserText;
import dev.drover.driver.TaskMount;
import dev.drover.taskrunner.TaskHookContext;
import dev.drover.taskrunner.TaskHookException;
import dev.drover.taskrunner.TaskPrestartHook;
import dev.drover.volumes.HostVolume;
import dev.drover.volumes.HostVolumes;
import dev.drover.volumes.VolumeMount;
import dev.drover.volumes.VolumeMounts;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Resolves a task's {@code config.volumeMounts} into the host directories its driver binds
 * ({@link dev.drover.driver.TaskAttachments#mounts()}), at each start: each names a volume of the allocation's
 * {@code spec.volumes}, whose host volume this agent must have and lend to the allocation's namespace (node admission
 * refused it otherwise; an agent restarted with another config may no longer), its directory checked again and no
 * symbolic link on its path followed. A mount is read-only when the host volume or the mount says so. The driver
 * validated where each goes (which differs between drivers).
 */
public final class VolumeMountHook implements TaskPrestartHook {

    private final HostVolumes volumes;

    public VolumeMountHook(HostVolumes volumes) {
        this.volumes = volumes;
    }

    @Override
    public String name() {
        return "volumes";
    }

    @Override
    public void prestart(TaskHookContext ctx) throws TaskHookException {
        Object raw = ctx.task().effectiveConfig().get(VolumeMounts.KEY);
        if (raw == null) {
            return;
        }
        List<String> problems = new ArrayList<>();
        List<VolumeMount> mounts = VolumeMounts.read(raw, VolumeMounts.Where.ANYWHERE, problems);
        for (int i = 0; i < mounts.size(); i++) {
            VolumeMount m = mounts.get(i);
            if (ctx.spec().volume(m.volume()) == null) {
                problems.add("config." + VolumeMounts.KEY + "[" + i + "].volume: " + UserText.quote(m.volume())
                        + " is not a volume of spec.volumes" + named(ctx.spec().getVolumes()));
            }
        }
        if (!problems.isEmpty()) {
            throw new TaskHookException(TaskEventType.FailedValidation, UserText.join(problems, "; "));
        }
        for (VolumeMount m : mounts) {
            Volume v = ctx.spec().volume(m.volume());
            HostVolume h = volumes.get(v.getHostVolume()).orElse(null);
            if (h == null || !h.allows(ctx.allocId().namespace())) {
                throw new TaskHookException(
                        TaskEventType.SetupFailure,
                        "volume " + UserText.quote(v.getName()) + ": host volume " + UserText.quote(v.getHostVolume())
                                + (h == null
                                        ? " is not on this node (the agent's hostVolumes no longer name it)"
                                        : " no longer lets namespace "
                                                + UserText.quote(ctx.allocId().namespace()) + " use it"));
            }
            Path source;
            try {
                source = HostVolumes.resolve(h);
            } catch (IOException e) {
                throw new TaskHookException(TaskEventType.SetupFailure, e.getMessage(), e);
            }
            ctx.attachments().mount(new TaskMount(source, m.destination(), h.readOnly() || m.readOnly()));
        }
    }

    private static String named(List<Volume> volumes) {
        if (volumes == null || volumes.isEmpty()) {
            return " (it names none)";
        }
        return " (it has " + UserText.join(volumes.stream().map(Volume::getName).toList(), ", ") + ")";
    }
}
