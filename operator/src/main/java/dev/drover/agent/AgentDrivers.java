package dev.drover.agent;

import dev.drover.driver.Driver;
import dev.drover.driver.DriverRegistry;
import dev.drover.driver.exec.ExecDriver;
import dev.drover.driver.host.LogRotator;
import dev.drover.driver.host.TaskCgroups;
import dev.drover.driver.host.TaskMonitor;
import dev.drover.driver.mock.MockDriver;
import dev.drover.driver.oci.OciDriver;
import dev.drover.driver.oci.OverlayCheck;
import dev.drover.driver.oci.RootfsMode;
import dev.drover.driver.rawexec.RawExecDriver;
import dev.drover.image.ImageGc;
import dev.drover.image.ImageMetrics;
import dev.drover.image.ImageStore;
import dev.drover.image.Platform;
import dev.drover.image.RegistryClient;
import dev.drover.image.RegistryTls;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The task drivers the agent's config enables (mock always; raw_exec, exec and oci when asked), the cgroups their
 * tasks run in (detected once, shared by them; none when none runs process tasks), and for oci the node's images.
 */
record AgentDrivers(DriverRegistry registry, TaskCgroups cgroups, Optional<Images> images) implements AutoCloseable {

    /** The node's images, for the oci driver: the store's collector, its series, and the registry client to close. */
    record Images(ImageGc gc, ImageMetrics metrics, RegistryClient registries) {}

    private static final Logger LOG = LoggerFactory.getLogger(AgentDrivers.class);

    static AgentDrivers start(AgentConfig config, Clock clock, LogRotator rotator) {
        List<Driver> enabled = new ArrayList<>(List.of(new MockDriver(clock, rotator)));
        TaskCgroups cgroups = TaskCgroups.none();
        Optional<Path> monitor = Optional.empty();
        ContainerSettings oci = config.containers();
        if (config.enableRawExec() || config.enableExec() || oci.enabled()) {
            cgroups = TaskCgroups.detect(config.cgroupParent(), config.pidsMax());
            monitor = monitor(config.dataDir());
        }
        if (config.enableRawExec()) {
            enabled.add(new RawExecDriver(clock, rotator, config.rawExecLauncher(), cgroups, monitor));
            LOG.warn("raw_exec is enabled: allocations on this node run host processes with the agent's privileges");
        }
        if (config.enableExec()) {
            ExecDriver exec = new ExecDriver(
                    clock,
                    rotator,
                    config.rawExecLauncher(),
                    cgroups,
                    config.dataDir(),
                    !config.devicePlugins().isEmpty(),
                    monitor);
            enabled.add(exec);
            exec.missing()
                    .ifPresentOrElse(
                            m -> LOG.warn(
                                    "exec is enabled but cannot run tasks here, each will fail validation: {}", m),
                            () -> LOG.info("exec is enabled: tasks run confined in namespaces, as their own user"));
        }
        Optional<Images> images = Optional.empty();
        if (oci.enabled()) {
            Images made = containers(config, oci, clock, rotator, cgroups, monitor, enabled);
            images = Optional.ofNullable(made);
        }
        return new AgentDrivers(new DriverRegistry(enabled), cgroups, images);
    }

    /**
     * Adds the oci driver, with the node's image store under the data dir; when the node cannot run containers (no
     * runtime, no store), the driver is still there and every oci task fails validation saying why.
     */
    private static Images containers(
            AgentConfig config,
            ContainerSettings oci,
            Clock clock,
            LogRotator rotator,
            TaskCgroups cgroups,
            Optional<Path> monitor,
            List<Driver> enabled) {
        Optional<String> missing = oci.runtime().isEmpty()
                ? Optional.of("no OCI runtime: install runc or crun, or set ociRuntime")
                : oci.runtime().filter(r -> !Files.isExecutable(r)).map(r -> "ociRuntime " + r + " is not executable");
        Images made = null;
        ImageStore store = null;
        try {
            RegistryClient registries =
                    new RegistryClient(RegistryTls.context(oci.registryCaFile()), Duration.ofSeconds(30), clock);
            store = new ImageStore(
                    config.dataDir().resolve("images"),
                    registries,
                    Platform.node(),
                    oci.maxImageBytes(),
                    clock,
                    oci.registryMirrors());
            made = new Images(
                    new ImageGc(store, oci.imageGc(), ImageGc.diskOf(store), clock), store.metrics(), registries);
        } catch (IOException e) {
            missing = Optional.of("the image store cannot be set up: " + e.getMessage());
        }
        OciDriver driver = new OciDriver(
                clock,
                rotator,
                config.rawExecLauncher(),
                cgroups,
                monitor,
                store,
                oci.runtime().orElse(Path.of("/nonexistent")),
                new OciDriver.OciSettings(
                        oci.allowPrivileged(),
                        oci.allowUnconfined(),
                        missing,
                        oci.cdi(),
                        missing.isPresent() ? RootfsMode.OVERLAY : rootfs(config, oci)));
        enabled.add(driver);
        missing.ifPresentOrElse(
                m -> LOG.warn("oci is enabled but cannot run containers here, each task will fail validation: {}", m),
                () -> LOG.info(
                        "oci is enabled: containers run by {}", oci.runtime().get()));
        return made;
    }

    /**
     * How containers' root filesystems are made: as {@code ociRootfs} says, else an overlay where a trial mount shows
     * the node can mount one, else a copy, with a warning of what that costs.
     */
    private static RootfsMode rootfs(AgentConfig config, ContainerSettings oci) {
        if (oci.rootfs().isPresent()) {
            if (oci.rootfs().get() == RootfsMode.COPY) {
                LOG.info("ociRootfs is copy: each container start copies its image's root filesystem");
            }
            return oci.rootfs().get();
        }
        OverlayCheck.Detected found = OverlayCheck.detect(config.dataDir().resolve("oci-overlay-check"));
        found.why()
                .ifPresent(why -> LOG.warn(
                        "containers' root filesystems are copies, not overlays: {}. Each container start copies its"
                                + " image's root filesystem into the task's directory: starts take longer (seconds"
                                + " per GiB) and each task takes as much disk again as its image (set ociRootfs to"
                                + " copy to skip this check)",
                        why));
        return found.mode();
    }

    /** One pass of image garbage collection, for the agent's collector; what fails is logged, not thrown. */
    void collectImages() {
        images.ifPresent(i -> {
            try {
                i.gc().collect();
            } catch (IOException | RuntimeException e) {
                LOG.warn("image garbage collection failed: {}", e.toString());
            }
        });
    }

    @Override
    public void close() {
        images.ifPresent(i -> i.registries().close());
    }

    /** The task monitor, put in the data dir; without it exit 130 and SIGINT cannot be told apart. */
    private static Optional<Path> monitor(Path dataDir) {
        try {
            Optional<Path> monitor = TaskMonitor.install(dataDir);
            monitor.ifPresentOrElse(
                    m -> LOG.info(
                            "process tasks run under the task monitor {}: their exit codes and signals are exact", m),
                    () -> LOG.warn("this agent was built without its task monitor (no C compiler): process tasks run"
                            + " under a shell, and a task that exits 130 cannot be told from one ended by SIGINT"));
            return monitor;
        } catch (IOException e) {
            LOG.warn(
                    "cannot install the task monitor in {} ({}): process tasks run under a shell, and a task that"
                            + " exits 130 cannot be told from one ended by SIGINT",
                    dataDir,
                    e.getMessage());
            return Optional.empty();
        }
    }
}
