package dev.drover.driver.exec;

import dev.drover.common.UserText;
import dev.drover.driver.DriverStartException;
import dev.drover.driver.TaskConfig;
import dev.drover.driver.host.Confinement;
import dev.drover.driver.host.HostProcessDriver;
import dev.drover.driver.host.TaskUser;
import dev.drover.driver.host.UserSwitch;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * What confines an exec task: util-linux {@code unshare} puts it in new PID, mount, IPC and UTS namespaces (a
 * fresh {@code /proc}, mounts private to it), where a root shell ({@link #SETUP}, PID 1 of the namespace) arranges
 * its view of the file system and then runs the task, as its user through {@link UserSwitch}, as PID 2, which
 * {@code setsid} (exec'd in place: the task's shell is no group leader) makes the leader of a process group of its
 * own. A stop's kill signal goes to that group alone: {@code unshare} blocks few signals (not SIGHUP nor SIGUSR1),
 * and when it dies its {@code --kill-child} SIGKILLs the namespace before the task could end gracefully. The shell
 * stays as the namespace's init: it reaps what the task leaves and, having no signal handlers, is stopped by no
 * signal but SIGKILL. When it exits, the kernel ends everything left in the namespace.
 *
 * <p>The view: the agent's data dir is covered by an empty tmpfs (mode 0711) in which only this task's allocation
 * directory is mounted again (through a descriptor opened before the cover), at its own path, so the
 * {@code DROVER_*} paths work and no other allocation nor the agent's store can be seen; {@code /tmp} is the task's
 * own {@code tmp/} directory (so the data dir must not be below {@code /tmp}); each GPU device node the task
 * was not given has {@code /dev/null} mounted over it; each host volume it mounts is bound below its local or alloc
 * directory ({@link VolumeBinds}), {@code nosuid} and {@code nodev}. The rest of the host's file system is seen as it is, with
 * the task user's permissions.
 */
final class Namespaces implements Confinement {

    /**
     * Arguments: the data dir, the allocation's directory, the task's directory, the task's environment file, the
     * number M of volumes, for each its host directory, where it goes and {@code ro} or {@code rw}, the number N of
     * device nodes to hide, those N nodes, then what runs the task (the user switch and command). Exits 126, saying
     * why on stderr, when a mount fails.
     *
     * <p>A volume is bound first to a directory of the cover (no other process sees it) and made read-only there if
     * it is to be, then moved onto its destination. Both ends are opened first and used through their descriptors,
     * after checking that each opened the very path it names: a symbolic link on either (one a task left in its
     * directory, to {@code /etc}) fails the start rather than being followed.
     */
    static final String SETUP = """
            data=$1; alloc=$2; task=$3; env=$4; m=$5; shift 5
            fail() { echo "drover: exec: $*" >&2; exit 126; }
            exec 3< "$env" || fail "cannot read the task's environment"
            exec 4< "$alloc" || fail "cannot open $alloc"
            mount -t tmpfs -o mode=0711,nosuid,nodev,size=1m tmpfs "$data" || fail "cannot cover $data"
            mkdir -p "$alloc" && mount --no-canonicalize --bind /proc/self/fd/4 "$alloc" || fail "cannot mount $alloc"
            exec 4<&-
            i=0
            while [ "$i" -lt "$m" ]; do
                src=$1; dst=$2; mode=$3; shift 3; stage="$data/.volume-$i"
                exec 5< "$src" || fail "cannot open host volume $src"
                [ "$(readlink /proc/self/fd/5)" = "$src" ] || fail "host volume $src is reached through a link"
                mkdir "$stage" && mount --no-canonicalize --bind /proc/self/fd/5 "$stage" || fail "cannot bind $src"
                mount -o "remount,bind,$mode,nosuid,nodev" "$stage" || fail "cannot make $src $mode"
                exec 5< "$dst" || fail "cannot open $dst"
                [ "$(readlink /proc/self/fd/5)" = "$dst" ] || fail "$dst is reached through a link: no volume goes there"
                mount --no-canonicalize --move "$stage" /proc/self/fd/5 || fail "cannot mount $src on $dst"
                exec 5<&-
                i=$((i + 1))
            done
            n=$1; shift
            mount --bind "$task/tmp" /tmp || fail "cannot mount $task/tmp on /tmp"
            while [ "$n" -gt 0 ]; do
                mount --bind /dev/null "$1" || fail "cannot hide $1"; shift; n=$((n - 1))
            done
            cd "$task" || fail "cannot enter $task"
            setsid "$@"
            code=$?
            exit "$code"
            """;

    /** The namespaces and how: a fork so the task's shell is PID 1, which dies with unshare. */
    static final List<String> UNSHARE = List.of(
            "unshare",
            "--pid",
            "--fork",
            "--kill-child",
            "--mount",
            "--ipc",
            "--uts",
            "--mount-proc",
            "--propagation",
            "private",
            "--");

    private static final Path TMP = Path.of("/tmp");

    /** exec's default user. */
    static final String DEFAULT_USER = "nobody";

    private final Path dataDir;
    private final Path passwd;
    private final GpuNodes gpus;

    Namespaces(Path dataDir, Path passwd, GpuNodes gpus) {
        this.dataDir = dataDir.toAbsolutePath().normalize();
        this.passwd = passwd;
        this.gpus = gpus;
    }

    /** {@code unshare}, then the namespace's init (the {@link #SETUP} shell), then the task. */
    @Override
    public int processDepth() {
        return 2;
    }

    @Override
    public boolean appliesEnvironment(TaskConfig task) {
        return true;
    }

    @Override
    public Optional<TaskUser> user(TaskConfig task) throws DriverStartException {
        return Optional.of(TaskUser.resolve(task.user() == null ? DEFAULT_USER : task.user(), passwd));
    }

    @Override
    public List<String> argv(TaskConfig task, Path statusDir, Path command, List<String> args)
            throws DriverStartException {
        TaskUser user = TaskUser.resolve(task.user() == null ? DEFAULT_USER : task.user(), passwd);
        user.own(task);
        List<String> commandAndArgs = new ArrayList<>(List.of(command.toString()));
        commandAndArgs.addAll(args);
        return argv(task, statusDir, user, gpus.hidden(task.env()), commandAndArgs);
    }

    /** The whole command line, for a user already found and the device nodes to hide. */
    List<String> argv(TaskConfig task, Path statusDir, TaskUser user, Set<Path> hidden, List<String> commandAndArgs)
            throws DriverStartException {
        if (user.uid() == 0 || user.gid() == 0) {
            // root in its namespaces could undo every one of them; group root opens what the host gives that group
            throw new DriverStartException(
                    "the exec driver does not run tasks as root (user " + UserText.cut(user.name(), 64)
                            + (user.uid() == 0 ? " is uid 0" : " has group 0")
                            + "): give the task another user, or use raw_exec for what needs root",
                    false);
        }
        Path allocRoot = task.allocDir().toAbsolutePath().normalize().getParent();
        if (allocRoot == null || !allocRoot.startsWith(dataDir) || allocRoot.equals(dataDir)) {
            throw new DriverStartException(
                    "the allocation's directory " + allocRoot + " is not inside the agent's data dir " + dataDir,
                    false);
        }
        if (dataDir.startsWith(TMP)) {
            throw new DriverStartException(
                    "the agent's data dir " + dataDir + " is below /tmp, which each exec task gets a private one of;"
                            + " give the agent a data dir elsewhere (the default is /var/lib/drover)",
                    false);
        }
        List<String> argv = new ArrayList<>();
        if (task.attachments().networkNamespace() != null) {
            // the allocation's network, joined before the task's own namespaces are made; nsenter execs, adding no
            // process between the supervisor and unshare
            argv.addAll(List.of("nsenter", "--net=" + task.attachments().networkNamespace(), "--"));
        }
        argv.addAll(UNSHARE);
        argv.addAll(List.of(
                "/bin/sh",
                "-c",
                SETUP,
                "drover-exec",
                dataDir.toString(),
                allocRoot.toString(),
                task.taskDir().toString(),
                statusDir.resolve(HostProcessDriver.TASK_ENV).toString()));
        List<VolumeBinds.Bind> binds = VolumeBinds.prepare(task);
        argv.add(Integer.toString(binds.size()));
        for (VolumeBinds.Bind b : binds) {
            argv.addAll(List.of(b.source().toString(), b.target().toString(), b.readOnly() ? "ro" : "rw"));
        }
        argv.add(Integer.toString(hidden.size()));
        hidden.stream().map(Path::toString).sorted().forEach(argv::add);
        argv.addAll(UserSwitch.words(user, commandAndArgs));
        return argv;
    }
}
