package dev.drover.driver.rawexec;

import dev.drover.driver.host.HostDriver;
import dev.drover.driver.host.HostProcessDriver;
import dev.drover.driver.host.LogRotator;
import dev.drover.driver.host.TaskCgroups;
import dev.drover.driver.host.UserSwitch;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.List;
import java.util.Optional;

/**
 * The {@code raw_exec} driver: a task's command runs on the host as the agent's user, or as the task's {@code user}
 * through {@link UserSwitch}, in no namespace of its own. Supervision, reattach after an agent restart, cgroups,
 * signals, logs and commands run in a task are the {@link HostProcessDriver}'s, which exec shares.
 */
public final class RawExecDriver extends HostDriver {

    public static final String NAME = "raw_exec";

    /** Tasks run directly, with no cgroups, under the shell supervisor. */
    public RawExecDriver(InstantSource clock, LogRotator rotator) {
        this(clock, rotator, List.of(), TaskCgroups.none(), Optional.empty());
    }

    /**
     * @param launcher words put before each task's supervisor command (see {@link HostProcessDriver})
     * @param cgroups  where each task's cgroup is made, or {@link TaskCgroups#none()} to run tasks unconfined
     * @param monitor  {@link dev.drover.driver.host.TaskMonitor}'s binary, or empty to use the shell's
     */
    public RawExecDriver(
            InstantSource clock,
            LogRotator rotator,
            List<String> launcher,
            TaskCgroups cgroups,
            Optional<Path> monitor) {
        super(new HostProcessDriver(
                NAME, clock, rotator, launcher, cgroups, new UserSwitch(Path.of("/etc/passwd")), monitor));
    }
}
