package dev.drover.driver.host;

import dev.drover.cgroups.Cgroup;
import dev.drover.driver.DriverException;
import dev.drover.driver.DriverStartException;
import dev.drover.driver.ExecProcess;
import dev.drover.driver.ExecRequest;
import dev.drover.driver.TaskHandle;
import dev.drover.driver.TaskNotRunningException;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Runs a command inside a running raw_exec or exec task ({@link dev.drover.driver.Driver#exec}), confined as the
 * task is, from what its status dir and handle keep (so also in a task an earlier agent started): in the task's
 * cgroup (a cgroup of its own inside the task's, joined first, so all it starts is charged to the task and
 * {@link HostExecProcess#close()} ends exactly that), in the task's namespaces where they are not the
 * agent's ({@code nsenter}: the exec driver's PID, mount, IPC and UTS namespaces; the host's for a raw_exec task
 * the agent launched onto the host), in the task's directory, as the task's user (the same {@link UserSwitch}),
 * with the task's environment (the same file the task's own shell read), the program looked up on the task's
 * {@code PATH}. {@code setsid} makes it the leader of a session and process group of its own, which is what
 * {@link HostExecProcess#close()} ends; with a terminal, the {@link Pty}'s slave is that session's controlling
 * terminal.
 *
 * <p>The namespaces are opened by descriptor before the task's process is checked once more (PID and start time),
 * so they are the task's, never those of a process that got its PID since. A task whose process is in a user
 * namespace other than the agent's runs no command: there it may have mounted what it likes over the programs the
 * command starts with ({@code /bin/sh}, {@code setpriv}), which would run as the agent's root. Its user namespace is
 * opened after the others and compared with the agent's: a process never returns to an ancestor user namespace, so
 * if it is in the agent's then, it was when the others were opened, and so were the namespaces it was in.
 */
final class TaskExec {

    /** In the status dir: the uid and gid the task's command runs as when it is switched to a user. */
    static final String USER_FILE = "user";

    /**
     * Arguments: the terminal ({@code -} for none), the environment file, the task's PID and start time, the number N
     * of cgroup.procs files, those N files, then the rest. Leaves the terminal on 0, 1 and 2, the environment on 3,
     * the task's mount, UTS, IPC, network and PID namespaces on 4 to 8; fails (126) when the task's process is in a user
     * namespace that is not the agent's. ({@code command exec}: a plain {@code exec}
     * whose redirection fails ends the shell at once, exit code 2, before {@code fail} could say why.)
     */
    static final String JOIN = """
            tty=$1; env=$2; pid=$3; start=$4; n=$5; shift 5
            fail() { echo "drover: exec: $*" >&2; exit 126; }
            if [ "$tty" != - ]; then command exec <>"$tty" >&0 2>&0 || fail "cannot open $tty"; fi
            command exec 3< "$env" || fail "cannot read the task's environment"
            command exec 4< "/proc/$pid/ns/mnt" 5< "/proc/$pid/ns/uts" 6< "/proc/$pid/ns/ipc" 7< "/proc/$pid/ns/net" \\
                8< "/proc/$pid/ns/pid" || fail "the task has exited"
            command exec 9< "/proc/$pid/ns/user" || fail "the task has exited"
            [ "$(readlink /proc/self/fd/9)" = "$(readlink /proc/self/ns/user)" ] ||
                fail "the task made a user namespace of its own: commands cannot be run inside it"
            exec 9<&-
            starttime() { shift 19; echo "$1"; }
            read -r s < "/proc/$pid/stat" && s=${s##*) } && [ "$(starttime $s)" = "$start" ] || fail "the task has exited"
            while [ "$n" -gt 0 ]; do
                echo $$ > "$1" || fail "cannot join the task's cgroup"; shift; n=$((n - 1))
            done
            exec "$@"
            """;

    /** Arguments: the task's directory, then the rest. Runs inside the task's namespaces. */
    static final String ENTER = """
            exec 4<&- 5<&- 6<&- 7<&- 8<&-
            cd "$1" || { echo "drover: exec: cannot enter the task's directory" >&2; exit 126; }
            shift
            exec "$@"
            """;

    /** The namespaces that {@code nsenter} may enter, each with its flag and the descriptor {@link #JOIN} opens. */
    private static final List<String[]> NAMESPACES = List.of(
            new String[] {"mnt", "--mount", "4"},
            new String[] {"uts", "--uts", "5"},
            new String[] {"ipc", "--ipc", "6"},
            new String[] {"net", "--net", "7"},
            new String[] {"pid", "--pid", "8"});

    private TaskExec() {}

    /** Records at start whom the task's command runs as, for a command run in it later; none: as the agent. */
    static void recordUser(Path status, Optional<TaskUser> user) throws DriverStartException {
        Path file = status.resolve(USER_FILE);
        try {
            if (user.isEmpty()) {
                Files.deleteIfExists(file);
                return;
            }
            Path tmp = status.resolve(USER_FILE + ".tmp");
            Files.writeString(tmp, user.get().uid() + " " + user.get().gid() + "\n", StandardCharsets.UTF_8);
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new DriverStartException("cannot write " + file + ": " + e.getMessage(), true, e);
        }
    }

    /**
     * Starts {@code request} in the task whose own process is {@code depth} generations below the handle's.
     *
     * @param cgroup the task's cgroup, if it has one
     */
    static ExecProcess start(TaskHandle handle, ExecRequest request, int depth, Optional<Cgroup> cgroup)
            throws DriverException {
        return start(handle, request, depth, cgroup, ProcessBuilder::start);
    }

    /** What starts the host process; tests make it fail. */
    interface Launcher {
        Process start(ProcessBuilder pb) throws IOException;
    }

    static ExecProcess start(
            TaskHandle handle, ExecRequest request, int depth, Optional<Cgroup> cgroup, Launcher launcher)
            throws DriverException {
        TaskSignals.Target task = TaskSignals.find(handle, depth);
        Path status = Path.of(handle.state().get("statusDir"));
        Path env = Files.exists(status.resolve(HostProcessDriver.TASK_ENV))
                ? status.resolve(HostProcessDriver.TASK_ENV)
                : status.resolve("env");
        Optional<TaskUser> user = user(status, task.pid());
        List<String> enter = namespaces(handle, task.pid());
        CommandStdio stdio = null;
        Optional<Cgroup> session = Optional.empty();
        Process process = null;
        try {
            session = TaskCgroups.forCommand(cgroup);
            stdio = CommandStdio.open(request, false);
            List<String> argv = new ArrayList<>(List.of(
                    "setsid",
                    "/bin/sh",
                    "-c",
                    JOIN,
                    "drover-exec",
                    stdio.slave(),
                    env.toString(),
                    Long.toString(task.pid()),
                    Long.toString(task.start())));
            List<String> procs = TaskCgroups.procsFiles(session);
            argv.add(Integer.toString(procs.size()));
            argv.addAll(procs);
            if (!enter.isEmpty()) {
                argv.add("nsenter");
                argv.addAll(enter);
                argv.add("--");
            }
            argv.addAll(List.of(
                    "/bin/sh", "-c", ENTER, "drover-exec", status.getParent().toString()));
            if (user.isPresent()) {
                argv.addAll(UserSwitch.words(user.get(), request.command()));
            } else {
                argv.addAll(List.of("/bin/sh", "-c", UserSwitch.TASK_SHELL, "drover-task"));
                argv.addAll(request.command());
            }
            ProcessBuilder pb = new ProcessBuilder(argv).directory(new File("/"));
            pb.environment().clear(); // the agent's variables stay with it; the task's come from its file
            pb.environment().put("PATH", TaskEnvironment.DEFAULT_PATH);
            if (stdio.terminal()) {
                pb.environment().put("TERM", "xterm"); // what the terminal is, unless the task's env says otherwise
            }
            stdio.redirect(pb);
            process = launcher.start(pb);
            return stdio.started(process, request, session);
        } catch (IOException | RuntimeException e) { // the command, terminal, pipes and cgroup go whatever failed
            if (process != null) {
                process.destroyForcibly();
            }
            if (stdio != null) {
                stdio.close();
            }
            session.ifPresent(HostExecProcess::end); // killed first: the command may have joined it
            if (e instanceof RuntimeException unchecked) {
                throw unchecked;
            }
            throw new DriverException(
                    "cannot run " + request.describe() + " in task " + handle.taskId() + ": " + e.getMessage(), e);
        }
    }

    /** The user the task's command runs as, as recorded at its start; empty: the agent's own, no switch. */
    private static Optional<TaskUser> user(Path status, long pid) throws DriverException {
        try {
            String[] ids = Files.readString(status.resolve(USER_FILE)).trim().split(" ");
            return Optional.of(new TaskUser(ids[0], Long.parseLong(ids[0]), Long.parseLong(ids[1])));
        } catch (NoSuchFileException e) {
            // a task an older agent started: whom its process runs as, when that is not the agent's user
            long[] its = ids(Path.of("/proc", Long.toString(pid), "status"), status);
            long[] own = ids(Path.of("/proc/self/status"), status);
            return its[0] == own[0] && its[1] == own[1]
                    ? Optional.empty()
                    : Optional.of(new TaskUser(Long.toString(its[0]), its[0], its[1]));
        } catch (IOException | NumberFormatException | ArrayIndexOutOfBoundsException e) {
            throw new DriverException("cannot read whom the task runs as (" + status.resolve(USER_FILE) + "): " + e);
        }
    }

    /** The real uid and gid of a {@code /proc/PID/status} file. */
    private static long[] ids(Path file, Path status) throws DriverException {
        long[] ids = {-1, -1};
        try {
            for (String line : Files.readAllLines(file)) {
                if (line.startsWith("Uid:") || line.startsWith("Gid:")) {
                    ids[line.startsWith("Uid:") ? 0 : 1] =
                            Long.parseLong(line.substring(4).trim().split("\\s+")[0]);
                }
            }
        } catch (IOException | NumberFormatException e) {
            throw new TaskNotRunningException("the task of " + status + " is not running: " + e.getMessage());
        }
        return ids;
    }

    /** {@code nsenter}'s flags for each namespace of the task's process that is not the agent's own. */
    private static List<String> namespaces(TaskHandle handle, long pid) throws DriverException {
        List<String> flags = new ArrayList<>();
        for (String[] ns : NAMESPACES) {
            try {
                Path own = Files.readSymbolicLink(Path.of("/proc/self/ns", ns[0]));
                Path its = Files.readSymbolicLink(Path.of("/proc", Long.toString(pid), "ns", ns[0]));
                if (!own.equals(its)) {
                    flags.add(ns[1] + "=/proc/self/fd/" + ns[2]);
                }
            } catch (IOException e) {
                throw new TaskNotRunningException(
                        "task " + handle.taskId() + " is not running: its process (pid " + pid + ") has exited");
            }
        }
        return flags;
    }
}
