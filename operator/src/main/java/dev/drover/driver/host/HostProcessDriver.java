package dev.drover.driver.host;

import dev.drover.cgroups.Cgroup;
import dev.drover.common.ConfigReader;
import dev.drover.driver.Driver;
import dev.drover.driver.DriverException;
import dev.drover.driver.DriverStartException;
import dev.drover.driver.ExecProcess;
import dev.drover.driver.ExecRequest;
import dev.drover.driver.ExitResult;
import dev.drover.driver.TaskConfig;
import dev.drover.driver.TaskHandle;
import dev.drover.driver.TaskNotRunningException;
import dev.drover.driver.TaskStats;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The engine of every driver whose tasks are host processes ({@code raw_exec}, {@code exec}): it runs each task under
 * a {@link Supervisor} so that it survives an agent restart and its exit code is not lost. A process is known by its
 * PID and start time together, never by PID alone. Kill signals go to the task's whole process group (below a
 * {@link Confinement}'s wrappers, the group the task's own process leads: see {@link TaskSignals#toStop}), and then,
 * with {@link TaskCgroups}, to every process in the task's cgroup. Output goes to the alloc's logs dir, rotated by
 * size by {@link LogRotator}. What tells the drivers apart is their name, which their handles carry, and the
 * {@link Confinement} their tasks run under.
 */
public final class HostProcessDriver implements Driver {

    /** In the status dir: the task's environment, when its {@link Confinement} applies it. */
    public static final String TASK_ENV = "task-env";

    /** Named for raw_exec, the first driver to use it; a task's handle records it, so it stays. */
    private static final String STATUS_DIR = ".drover-raw-exec";

    private final InstantSource clock;
    private final LogRotator rotator;
    private final List<String> launcher;
    private final Map<String, CompletableFuture<ExitResult>> exits = new ConcurrentHashMap<>();
    private final Orphans orphans = new Orphans();
    private final TaskCgroups cgroups;
    private final String name;
    private final Confinement confinement;
    private final Optional<Path> monitor;

    /**
     * A driver named {@code name} whose tasks run under {@code confinement}.
     *
     * @param launcher words put before each task's supervisor command, e.g. {@code nsenter ... systemd-run --scope}
     *                 so tasks run on the host outside the agent's container; empty to run them directly
     * @param cgroups  where each task's cgroup is made, or {@link TaskCgroups#none()} to run tasks unconfined
     * @param monitor  {@link TaskMonitor}'s binary, or empty to record exits with the supervisor's shell
     */
    public HostProcessDriver(
            String name,
            InstantSource clock,
            LogRotator rotator,
            List<String> launcher,
            TaskCgroups cgroups,
            Confinement confinement,
            Optional<Path> monitor) {
        this.name = name;
        this.monitor = monitor;
        this.confinement = confinement;
        this.clock = clock;
        this.rotator = rotator;
        this.launcher = List.copyOf(launcher);
        this.cgroups = cgroups;
    }

    @Override
    public String name() {
        return name;
    }

    private record Config(String command, List<String> args) {}

    private static Config parse(Map<String, Object> raw, List<String> problems) {
        ConfigReader r = new ConfigReader(raw);
        String command = r.string("command");
        List<String> args = r.strings("args");
        if (command == null || command.isBlank()) {
            r.problem("config.command: is required (an absolute path, or one relative to the task directory)");
        }
        problems.addAll(r.problems());
        return new Config(command, args == null ? List.of() : args);
    }

    @Override
    public List<String> validate(Map<String, Object> config) {
        List<String> problems = new ArrayList<>();
        parse(config, problems);
        return problems;
    }

    @Override
    public TaskHandle start(TaskConfig task) throws DriverStartException {
        List<String> problems = new ArrayList<>();
        Config config = parse(task.config(), problems);
        if (!problems.isEmpty()) {
            throw new DriverStartException(String.join("; ", problems), false);
        }
        Path command = task.taskDir().resolve(config.command());
        if (!Files.isRegularFile(command) || !Files.isExecutable(command)) {
            throw new DriverStartException("command " + command + " does not exist or is not executable", false);
        }
        return start(task, command, config.args());
    }

    /**
     * Starts {@code task} running {@code command} with {@code args} under this driver's {@link Confinement}: for a
     * driver whose tasks' config does not name a host command (the oci driver runs its runtime).
     */
    public TaskHandle start(TaskConfig task, Path command, List<String> args) throws DriverStartException {
        Path status = task.taskDir().resolve(STATUS_DIR);
        Optional<TaskHandle> unrecorded;
        try {
            unrecorded = findUnrecorded(task);
        } catch (DriverException e) {
            throw new DriverStartException(e.getMessage(), true, e);
        }
        if (unrecorded.isPresent()) {
            return unrecorded.get(); // started before, by an agent that died before storing the handle
        }
        try {
            Files.createDirectories(status);
            Files.deleteIfExists(status.resolve("supervisor"));
            Files.deleteIfExists(status.resolve("pid"));
            Files.deleteIfExists(status.resolve("exit"));
            Files.createDirectories(task.logsDir());
            LogRotator.prepare(task.stdout());
            LogRotator.prepare(task.stderr());
        } catch (IOException e) {
            throw new DriverStartException("cannot prepare " + status + ": " + e.getMessage(), true, e);
        }
        if (confinement.appliesEnvironment(task)) {
            TaskEnvironment.write(status.resolve("env"), Map.of("PATH", TaskEnvironment.DEFAULT_PATH));
            TaskEnvironment.write(status.resolve(TASK_ENV), TaskEnvironment.of(task));
        } else {
            TaskEnvironment.write(status.resolve("env"), TaskEnvironment.of(task));
        }
        TaskExec.recordUser(status, confinement.user(task));
        List<String> run = confinement.argv(task, status, command, args);
        Optional<Cgroup> cgroup = cgroups.create(task);
        Map<String, String> cgroupState;
        try {
            cgroupState = TaskCgroups.state(cgroup);
        } catch (IOException e) {
            throw new DriverStartException("cannot read the task's cgroup: " + e.getMessage(), true, e);
        }
        List<String> procs = TaskCgroups.procsFiles(cgroup);
        List<String> argv = Supervisor.argv(launcher, monitor, status, task, procs, run);
        ProcessBuilder pb = new ProcessBuilder(argv)
                .directory(task.taskDir().toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.DISCARD);
        pb.environment().clear(); // the agent's own variables (its token paths, proxies, JVM options) stay with it
        pb.environment().put("PATH", TaskEnvironment.DEFAULT_PATH);
        Process supervisor;
        try {
            supervisor = pb.start();
        } catch (IOException e) {
            throw new DriverStartException("cannot start the supervisor: " + e.getMessage(), true, e);
        }
        StatusFiles.PidFile started;
        try {
            started = StatusFiles.awaitPid(status, supervisor);
        } catch (DriverStartException e) {
            cgroup.ifPresent(c -> cgroups.release(handle(task, status, -1, -1, -1, -1, cgroupState)));
            throw e;
        }
        TaskHandle handle = handle(
                task,
                status,
                started.pid(),
                started.startTime(),
                supervisor.pid(),
                supervisorStart(status, supervisor),
                cgroupState);
        rotator.watch(task.stdout());
        rotator.watch(task.stderr());
        exits.put(task.id(), watchExit(handle, supervisor.onExit().thenApply(p -> null)));
        return handle;
    }

    /**
     * The supervisor's start time, as it recorded it before the task's pid file (read from /proc, a supervisor of a
     * task that ended at once may be gone already, and a loaded machine made that common); /proc's when the file
     * names another process (a launcher that forks).
     */
    private static long supervisorStart(Path status, Process supervisor) {
        return StatusFiles.PidFile.read(status.resolve("supervisor"))
                .filter(recorded -> recorded.pid() == supervisor.pid())
                .map(StatusFiles.PidFile::startTime)
                .orElseGet(() -> Procs.startTime(supervisor.pid()).orElse(-1));
    }

    private TaskHandle handle(
            TaskConfig task,
            Path status,
            long pid,
            long pidStart,
            long supervisorPid,
            long supervisorStart,
            Map<String, String> cgroup) {
        Map<String, String> state = new HashMap<>(cgroup);
        state.putAll(Map.of(
                "pid", Long.toString(pid),
                "pidStart", Long.toString(pidStart),
                "supervisorPid", Long.toString(supervisorPid),
                "supervisorStart", Long.toString(supervisorStart),
                "statusDir", status.toString(),
                "stdout", task.stdout().toString(),
                "stderr", task.stderr().toString()));
        return new TaskHandle(name, task.id(), clock.instant(), state);
    }

    /**
     * What a handle of an earlier agent's start keeps of the task's cgroup, found again by its name; empty when
     * tasks run unconfined or it has none.
     */
    private Map<String, String> foundCgroup(TaskConfig task) throws DriverException {
        TaskHandle byName = new TaskHandle(
                name, task.id(), clock.instant(), Map.of(TaskCgroups.NAME_KEY, TaskCgroups.nameOf(task)));
        try {
            return TaskCgroups.state(cgroups.find(byName));
        } catch (IOException e) {
            throw new DriverException("task " + task.id() + ": cannot read its cgroup: " + e.getMessage(), e);
        }
    }

    /**
     * The start of {@code task} an earlier agent made and did not record ({@link UnrecordedStart}), taken over: its
     * exit watched as {@link #recover} does, its cgroup found again by name.
     */
    @Override
    public Optional<TaskHandle> findUnrecorded(TaskConfig task) throws DriverException {
        Path status = task.taskDir().resolve(STATUS_DIR);
        Optional<UnrecordedStart> found = UnrecordedStart.find(status, task.id());
        if (found.isEmpty()) {
            return Optional.empty();
        }
        UnrecordedStart s = found.get();
        return Optional.of(recover(handle(
                task, status, s.pid(), s.pidStart(), s.supervisorPid(), s.supervisorStart(), foundCgroup(task))));
    }

    /** The exit, once the supervisor has gone: from its status file, told as an OOM kill when it was one. */
    private CompletableFuture<ExitResult> watchExit(TaskHandle handle, CompletableFuture<Void> supervisorGone) {
        Path exitFile = Path.of(handle.state().get("statusDir"), "exit");
        return supervisorGone.thenApply(ignored -> cgroups.withOom(handle, StatusFiles.readExit(exitFile)));
    }

    @Override
    public CompletableFuture<ExitResult> exit(TaskHandle handle) {
        CompletableFuture<ExitResult> f = exits.get(handle.taskId());
        return f != null
                ? f
                : CompletableFuture.failedFuture(new DriverException(
                        "no " + name + " task " + handle.taskId() + " in this agent (recover it first)"));
    }

    @Override
    public void stop(TaskHandle handle, Duration timeout, String signal) throws DriverException {
        CompletableFuture<ExitResult> exit = exit(handle);
        if (exit.isDone()) {
            return;
        }
        long pid = handle.longState("pid", -1);
        if (!Procs.isSame(pid, handle.longState("pidStart", -2))) {
            cgroups.killAll(handle); // what it left behind
            awaitQuietly(exit, Duration.ofSeconds(5)); // already gone: only the supervisor is left to finish
            return;
        }
        TaskSignals.toStop(handle, signal, confinement.processDepth());
        boolean exited = awaitQuietly(exit, timeout);
        cgroups.killAll(handle); // a process that left the task's session ends too
        if (exited) {
            return;
        }
        TaskSignals.toGroup(pid, "SIGKILL");
        if (!awaitQuietly(exit, Duration.ofSeconds(10))) {
            throw new DriverException("task " + handle.taskId() + " (pid " + pid + ") did not exit after SIGKILL");
        }
    }

    private static boolean awaitQuietly(CompletableFuture<ExitResult> exit, Duration timeout) throws DriverException {
        try {
            exit.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
            return true;
        } catch (TimeoutException e) {
            return false;
        } catch (ExecutionException e) {
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DriverException("interrupted while waiting for the task to exit", e);
        }
    }

    /** To the task's own process, not its group: see {@link TaskSignals}. */
    @Override
    public void signal(TaskHandle handle, String signal) throws DriverException {
        requireRunning(handle);
        TaskSignals.toTask(handle, signal, confinement.processDepth());
    }

    /** In the task's confinement: see {@link TaskExec}. */
    @Override
    public ExecProcess exec(TaskHandle handle, ExecRequest request) throws DriverException {
        requireRunning(handle);
        try {
            return TaskExec.start(handle, request, confinement.processDepth(), cgroups.find(handle));
        } catch (IOException e) {
            throw new DriverException("task " + handle.taskId() + ": cannot read its cgroup: " + e.getMessage(), e);
        }
    }

    private void requireRunning(TaskHandle handle) throws TaskNotRunningException {
        CompletableFuture<ExitResult> exit = exits.get(handle.taskId());
        if (exit == null || exit.isDone()) {
            throw new TaskNotRunningException("task " + handle.taskId() + " is not running: "
                    + (exit == null ? "this agent does not watch it (recover it first)" : "it has exited"));
        }
    }

    @Override
    public void destroy(TaskHandle handle) {
        cgroups.release(handle);
        exits.remove(handle.taskId());
        rotator.forget(Path.of(handle.state().get("stdout")));
        rotator.forget(Path.of(handle.state().get("stderr")));
    }

    @Override
    public TaskHandle recover(TaskHandle handle) throws DriverException {
        if (exits.containsKey(handle.taskId())) {
            return handle;
        }
        long supervisorPid = handle.longState("supervisorPid", -1);
        Path exitFile = Path.of(handle.state().get("statusDir"), "exit");
        CompletableFuture<ExitResult> exit;
        if (Procs.isSame(supervisorPid, handle.longState("supervisorStart", -2))) {
            CompletableFuture<Void> gone = ProcessHandle.of(supervisorPid)
                    .map(p -> p.onExit().thenApply(x -> (Void) null))
                    .orElse(CompletableFuture.completedFuture(null));
            exit = watchExit(handle, gone);
        } else if (Files.exists(exitFile)) {
            // it ended while nobody watched
            exit = CompletableFuture.completedFuture(cgroups.withOom(handle, StatusFiles.readExit(exitFile)));
        } else if (Procs.isSame(handle.longState("pid", -1), handle.longState("pidStart", -2))) {
            // The supervisor died and the task runs on: taking it over is the only way not to run it twice.
            exit = orphans.watch(handle.longState("pid", -1), handle.longState("pidStart", -2))
                    .thenApply(r -> cgroups.withOom(handle, r));
        } else {
            throw new DriverException("task " + handle.taskId() + " is gone: its supervisor (pid " + supervisorPid
                    + ") is not running and recorded no exit status");
        }
        rotator.watch(Path.of(handle.state().get("stdout")));
        rotator.watch(Path.of(handle.state().get("stderr")));
        exits.put(handle.taskId(), exit);
        return handle;
    }

    @Override
    public TaskStats stats(TaskHandle handle) throws DriverException {
        long pid = handle.longState("pid", -1);
        if (!Procs.isSame(pid, handle.longState("pidStart", -2))) {
            throw new DriverException("task " + handle.taskId() + " is not running");
        }
        Optional<TaskStats> counted = cgroups.stats(handle, clock.instant());
        if (counted.isPresent()) {
            return counted.get();
        }
        Duration cpu = Procs.cpuTime(pid);
        long rss = Procs.residentBytes(pid);
        for (ProcessHandle child :
                ProcessHandle.of(pid).map(p -> p.descendants().toList()).orElse(List.of())) {
            cpu = cpu.plus(Procs.cpuTime(child.pid()));
            rss += Procs.residentBytes(child.pid());
        }
        return new TaskStats(clock.instant(), cpu, rss);
    }

    @Override
    public void close() {
        orphans.close();
        exits.clear();
        cgroups.removeParentIfUnused();
    }
}
