package dev.drover.driver.host;

import dev.drover.driver.DriverStartException;
import dev.drover.driver.TaskConfig;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Runs a task as another user with util-linux {@code setpriv}: real, effective and saved uid and gid switched, no
 * supplementary groups, no inheritable capabilities and {@code no_new_privs} (a set-uid program cannot give root
 * back). The task's environment is applied only after the switch: the agent's shell opens
 * {@link HostProcessDriver#TASK_ENV} as descriptor 3, and the task's own shell, already the task's user, evaluates it
 * and execs the command, so no task variable is in force while anything runs with the agent's privileges.
 *
 * <p>raw_exec uses it when a task sets {@code user}; without one it runs as the agent's user, as before.
 */
public final class UserSwitch implements Confinement {

    /** What the task's own shell runs: the environment, then the command. */
    public static final String TASK_SHELL = "eval \"$(cat <&3)\" && exec 3<&- && exec \"$@\"";

    private final Path passwd;

    public UserSwitch(Path passwd) {
        this.passwd = passwd;
    }

    /**
     * The words that switch to {@code user} and run {@code commandAndArgs} with the environment read from
     * descriptor 3.
     */
    public static List<String> words(TaskUser user, List<String> commandAndArgs) {
        List<String> argv = new ArrayList<>(List.of(
                "setpriv",
                "--reuid=" + user.uid(),
                "--regid=" + user.gid(),
                "--clear-groups",
                "--inh-caps=-all",
                "--no-new-privs",
                "--",
                "/bin/sh",
                "-c",
                TASK_SHELL,
                "drover-task"));
        argv.addAll(commandAndArgs);
        return argv;
    }

    @Override
    public boolean appliesEnvironment(TaskConfig task) {
        return task.user() != null;
    }

    @Override
    public Optional<TaskUser> user(TaskConfig task) throws DriverStartException {
        return task.user() == null ? Optional.empty() : Optional.of(TaskUser.resolve(task.user(), passwd));
    }

    @Override
    public List<String> argv(TaskConfig task, Path statusDir, Path command, List<String> args)
            throws DriverStartException {
        List<String> commandAndArgs = new ArrayList<>(List.of(command.toString()));
        commandAndArgs.addAll(args);
        if (task.user() == null) {
            return commandAndArgs;
        }
        TaskUser user = TaskUser.resolve(task.user(), passwd);
        user.own(task);
        List<String> argv = new ArrayList<>(List.of(
                "/bin/sh",
                "-c",
                "exec 3< \"$0\" || exit 126; exec \"$@\"",
                statusDir.resolve(HostProcessDriver.TASK_ENV).toString()));
        argv.addAll(words(user, commandAndArgs));
        return argv;
    }
}
