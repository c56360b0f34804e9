package dev.drover.agent;

import dev.drover.driver.Driver;
import dev.drover.driver.DriverRegistry;
import dev.drover.driver.exec.ExecDriver;
import dev.drover.driver.mock.MockDriver;
import dev.drover.driver.rawexec.LogRotator;
import dev.drover.driver.rawexec.RawExecDriver;
import dev.drover.driver.rawexec.TaskCgroups;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
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
        if (config.enableRawExec() || config.enableExec()) {
            cgroups = TaskCgroups.detect(config.cgroupParent(), config.pidsMax());
        }
        if (config.enableRawExec()) {
            enabled.add(new RawExecDriver(clock, rotator, config.rawExecLauncher(), cgroups));
            LOG.warn("raw_exec is enabled: allocations on this node run host processes with the agent's privileges");
        }
        if (config.enableExec()) {
            ExecDriver exec = new ExecDriver(
                    clock,
                    rotator,
                    config.rawExecLauncher(),
                    cgroups,
                    config.dataDir(),
                    !config.devicePlugins().isEmpty());
            enabled.add(exec);
            exec.missing()
                    .ifPresentOrElse(
                            m -> LOG.warn(
                                    "exec is enabled but cannot run tasks here, each will fail validation: {}", m),
                            () -> LOG.info("exec is enabled: tasks run confined in namespaces, as their own user"));
        }
        return new AgentDrivers(new DriverRegistry(enabled), cgroups);
    }
}
