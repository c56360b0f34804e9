package dev.drover.driver.host;

import dev.drover.driver.TaskConfig;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The shell script every host-process task runs under; it is what lets a task
 * outlive the agent and still report its exit code. The agent starts it with
 * {@code setsid} and no pipes, so it is in a session of its own. It starts the
 * task in the foreground through {@code setsid} again: the task gets its own
 * session and process group (the agent signals that group), keeps default
 * signal dispositions (an asynchronous {@code &} job would ignore SIGINT), and
 * writes its own PID and start time (field 22 of {@code /proc/PID/stat}: the
 * two name one process for good) before it execs. When the task ends, its
 * exit status is written to the status dir's {@code exit} file: by {@link TaskMonitor}'s binary when the agent has
 * one, which the script then execs into (same PID) and which writes {@code exit N} or {@code signal N} exactly; else
 * by the script itself, as a bare number (128 + N for signal N, as shells report it: exit 130 and SIGINT look alike).
 * The script first records its own PID and start time, so that an agent killed before it
 * stored the task's handle finds the task still running instead of starting
 * it again (and never takes a process that got the PID since for it). Every file is written by an atomic rename.
 *
 * <p>The supervisor runs with a fixed environment (only {@link TaskEnvironment#DEFAULT_PATH}), never the
 * task's: a task's {@code PATH} cannot hide {@code mv} or {@code setsid} from it and its {@code LD_PRELOAD} never
 * loads into it. The task's environment applies at its {@code exec} only: the last shell starts empty
 * ({@code env -i}, no values on any command line), writes the PID, sources the file {@link TaskEnvironment}
 * wrote, and execs the task.
 *
 * <p>A task with a cgroup joins it in that last shell: it writes its own PID to each {@code cgroup.procs} file it
 * is given, before it writes its pid file, so that the task is confined from its first instruction and the
 * supervisor is not charged to it. One it cannot join stops the start: the shell exits {@link #CANNOT_JOIN}
 * without running the task.
 *
 * <p>Arguments: status dir, stdout file, stderr file, the monitor's absolute path ({@code -} for none: an
 * empty argument would hide the whole command line from {@code ProcessHandle.Info}), the number N of
 * cgroup.procs files, those N files, then the command.
 */
final class Supervisor {

    /** What the task's shell exits with when it cannot join the task's cgroup. */
    static final int CANNOT_JOIN = 125;

    static final String SCRIPT = """
            status=$1; out=$2; err=$3; monitor=$4; shift 4
            starttime() { shift 19; echo "$1"; }; read -r s < /proc/$$/stat && s=${s##*) } &&
            echo "$$ $(starttime $s)" > "$status/supervisor.tmp" && mv "$status/supervisor.tmp" "$status/supervisor"
            task='n=$1; shift; while [ "$n" -gt 0 ]; do
                    echo $$ > "$1" || { echo "drover: cannot join cgroup $1" >&2; exit 125; }; shift; n=$((n - 1))
                done
                starttime() { shift 19; echo "$1"; }; read -r s < /proc/$$/stat && s=${s##*) } &&
                echo "$$ $(starttime $s)" > "$0/pid.tmp" && mv "$0/pid.tmp" "$0/pid" && . "$0/env" && exec "$@"'
            if [ "$monitor" != - ]; then
                exec "$monitor" "$status/exit" /usr/bin/env -i "PATH=$PATH" /bin/sh -c "$task" "$status" "$@" \
                    </dev/null >>"$out" 2>>"$err"
            fi
            setsid /usr/bin/env -i "PATH=$PATH" /bin/sh -c "$task" "$status" "$@" </dev/null >>"$out" 2>>"$err"
            code=$?
            echo "$code" > "$status/exit.tmp" && mv "$status/exit.tmp" "$status/exit"
            """;

    /**
     * The command that starts a task's supervisor, behind {@code launcher}.
     *
     * @param monitor {@link TaskMonitor}'s binary, or empty to record exits with the shell
     */
    static List<String> argv(
            List<String> launcher,
            Optional<Path> monitor,
            Path status,
            TaskConfig task,
            List<String> procs,
            List<String> run) {
        List<String> argv = new ArrayList<>(launcher);
        argv.addAll(List.of(
                "setsid",
                "/bin/sh",
                "-c",
                SCRIPT,
                "drover-supervisor",
                status.toString(),
                task.stdout().toString(),
                task.stderr().toString(),
                monitor.map(m -> m.toAbsolutePath().toString()).orElse("-"),
                Integer.toString(procs.size())));
        argv.addAll(procs);
        argv.addAll(run);
        return argv;
    }

    private Supervisor() {}
}
