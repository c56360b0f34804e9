package dev.drover.driver.host;

import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Optional;

/**
 * The host-process engine as the tests of what raw_exec and exec share make it: tasks run as the agent's user, or
 * as their {@code user} through {@link UserSwitch}, in no namespace of their own.
 */
final class HostDrivers {

    /** What the engine's handles and messages call the driver in these tests. */
    static final String NAME = "host";

    private HostDrivers() {}

    /** Tasks run directly, with no cgroups, under the shell supervisor. */
    static HostProcessDriver plain(LogRotator rotator) {
        return of(rotator, List.of(), TaskCgroups.none(), Optional.empty());
    }

    /** Each task's supervisor runs behind {@code launcher}. */
    static HostProcessDriver launched(LogRotator rotator, List<String> launcher) {
        return of(rotator, launcher, TaskCgroups.none(), Optional.empty());
    }

    /** Each task runs in a cgroup of {@code cgroups}. */
    static HostProcessDriver inCgroups(LogRotator rotator, TaskCgroups cgroups) {
        return of(rotator, List.of(), cgroups, Optional.empty());
    }

    /** Each task runs under {@code monitor}, {@link TaskMonitor}'s binary. */
    static HostProcessDriver monitored(LogRotator rotator, Path monitor) {
        return of(rotator, List.of(), TaskCgroups.none(), Optional.of(monitor));
    }

    private static HostProcessDriver of(
            LogRotator rotator, List<String> launcher, TaskCgroups cgroups, Optional<Path> monitor) {
        return new HostProcessDriver(
                NAME, Clock.systemUTC(), rotator, launcher, cgroups, new UserSwitch(Path.of("/etc/passwd")), monitor);
    }
}
