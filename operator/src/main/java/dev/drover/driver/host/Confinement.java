package dev.drover.driver.host;

import dev.drover.driver.DriverStartException;
import dev.drover.driver.TaskConfig;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * How a process task's command is run once its supervisor's last shell has joined the task's cgroup: as it is
 * ({@link #NONE}), as another user ({@link UserSwitch}), or in namespaces of its own (the exec driver).
 */
public interface Confinement {

    /** Runs the command as it is, as the agent's user. */
    Confinement NONE = new Confinement() {
        @Override
        public boolean appliesEnvironment(TaskConfig task) {
            return false;
        }

        @Override
        public List<String> argv(TaskConfig task, Path statusDir, Path command, List<String> args) {
            List<String> argv = new java.util.ArrayList<>(List.of(command.toString()));
            argv.addAll(args);
            return argv;
        }
    };

    /**
     * Whether the words of {@link #argv} apply the task's environment themselves, after dropping privileges, from
     * {@link HostProcessDriver#TASK_ENV} in the status dir: then the supervisor's shell runs with only {@code PATH}, so
     * no variable of the task ({@code LD_PRELOAD}) is in force while anything runs with the agent's privileges.
     */
    boolean appliesEnvironment(TaskConfig task);

    /**
     * How many generations below the process that writes the task's pid file the task's own process is, the one a
     * signal for the task goes to: 0 when each wrapper execs the next (the command has the recorded PID); more when
     * wrappers stay as its parents (the exec driver's {@code unshare} and its namespace's init).
     */
    default int processDepth() {
        return 0;
    }

    /**
     * The user the task's command is switched to, which a command run in the task later is switched to too; empty
     * when it runs as the agent's user.
     *
     * @throws DriverStartException when the task's user does not exist, not recoverable
     */
    default Optional<TaskUser> user(TaskConfig task) throws DriverStartException {
        return Optional.empty();
    }

    /**
     * Prepares what the task needs (its directories' owner) and returns the words that run {@code command}.
     *
     * @throws DriverStartException when the task cannot run so (an unknown user), not recoverable
     */
    List<String> argv(TaskConfig task, Path statusDir, Path command, List<String> args) throws DriverStartException;
}
