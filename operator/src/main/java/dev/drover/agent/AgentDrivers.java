package dev.drover.agent;

import dev.drover.driver.Driver;
import dev.drover.driver.DriverRegistry;
import dev.drover.driver.exec.ExecDriver;
import dev.drover.driver.host.LogRotator;
import dev.drover.driver.host.TaskCgroups;
import dev.drover.driver.host.TaskMonitor;
import dev.drover.driver.mock.MockDriver;
import dev.drover.driver.rawexec.RawExecDriver;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The task drivers the agent's config enables (mock always; raw_exec and exec when asked), and the cgroups their
 * tasks run in (detected once, shared by both; none when neither runs process tasks).
 */
record AgentDrivers(DriverRegistry registry, TaskCgroups cgroups) {

    private static final Logger LOG = LoggerFactory.getLogger(AgentDrivers.class);

    static AgentDrivers start(AgentConfig config, Clock clock, LogRotator rotator) {
        List<Driver> enabled = new ArrayList<>(List.of(new MockDriver(clock, rotator)));
        TaskCgroups cgroups = TaskCgroups.none();
        Optional<Path> monitor = Optional.empty();
        if (config.enableRawExec() || config.enableExec()) {
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
        return new AgentDrivers(new DriverRegistry(enabled), cgroups);
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
