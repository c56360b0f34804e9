package dev.drover.driver.host;

import dev.drover.api.Signals;
import dev.drover.driver.DriverException;
import dev.drover.driver.TaskHandle;
import dev.drover.driver.TaskNotRunningException;
import java.io.IOException;
import java.util.Comparator;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;

/**
 * Signals sent with the host's {@code kill}: to a task's process group (a stop), or to the task's own process alone
 * (a signal asked for while it runs, such as SIGHUP once its configuration changed; what its children get is its
 * business, as with {@code kill PID}). A process is known by its PID and start time together: before a signal goes
 * out, the recorded PID must still be the process that started then, so a PID the kernel has given to another
 * process since is never signalled. What is left is the instant between that check and the {@code kill}, in which
 * the task would have to exit and the kernel go round every PID to reuse its own.
 */
final class TaskSignals {

    private TaskSignals() {}

    /**
     * Sends {@code signal} to the task's own process: the recorded one, or the one {@code depth} generations below
     * it when the command runs under wrappers that stay (the exec driver's {@code unshare} and namespace init).
     */
    static void toTask(TaskHandle handle, String signal, int depth) throws DriverException {
        String sig = Signals.canonical(signal);
        Target target = find(handle, depth);
        if (!Procs.isSame(target.pid(), target.start()) || !send(Long.toString(target.pid()), sig)) {
            throw exitedBefore(handle, sig, target.pid());
        }
    }

    /**
     * Sends a stop's {@code signal}: with no wrappers ({@code depth} 0), to the task's whole process group, as
     * always; below wrappers, to the process group the task's own process leads (what it started, not the wrappers,
     * which may die of a signal they do not block and take the task with them), or to that process alone when it
     * leads none (a task started before it was made to). Nothing when the task's process has not started or has
     * exited: then its wrappers end soon, or the forced kill ends them.
     */
    static void toStop(TaskHandle handle, String signal, int depth) throws DriverException {
        String sig = Signals.canonical(signal);
        if (depth == 0) {
            toGroup(handle.longState("pid", -1), sig);
            return;
        }
        Target target;
        try {
            target = find(handle, depth);
        } catch (TaskNotRunningException e) {
            return;
        }
        boolean leader = Procs.processGroup(target.pid()).orElse(-1) == target.pid();
        if (Procs.isSame(target.pid(), target.start())) { // a group led by a PID reused since is never signalled
            send((leader ? "-" : "") + target.pid(), sig);
        }
    }

    /** A process known by its PID and start time together. */
    record Target(long pid, long start) {}

    /** The task's own process, {@code depth} generations below the recorded one. */
    static Target find(TaskHandle handle, int depth) throws TaskNotRunningException {
        long pid = handle.longState("pid", -1);
        long start = handle.longState("pidStart", -2);
        if (!Procs.isSame(pid, start)) {
            throw new TaskNotRunningException(
                    "task " + handle.taskId() + " is not running: its process (pid " + pid + ") has exited");
        }
        long target = pid;
        for (int generation = 0; generation < depth; generation++) {
            target = eldestChild(target)
                    .orElseThrow(() -> new TaskNotRunningException("task " + handle.taskId()
                            + " is not running: its command has not started yet, or has exited"));
        }
        long targetStart = Procs.startTime(target).orElse(-1);
        if (!Procs.isSame(pid, start)) { // the children found are those of the task's process, not of a newcomer
            throw new TaskNotRunningException(
                    "task " + handle.taskId() + " is not running: its process (pid " + pid + ") has exited");
        }
        return new Target(target, targetStart);
    }

    private static TaskNotRunningException exitedBefore(TaskHandle handle, String signal, long pid) {
        return new TaskNotRunningException(
                "task " + handle.taskId() + " exited before " + signal + " reached it (pid " + pid + ")");
    }

    /** Sends {@code signal} to process group {@code pgid}; nothing when the group has no process left. */
    static void toGroup(long pgid, String signal) throws DriverException {
        send("-" + pgid, signal);
    }

    /**
     * The child of {@code pid} that started first and has not exited: a wrapper's command, not what the command
     * left behind (orphans a namespace's init adopted start later); the one with the lower PID of its namespace when
     * two started in the same clock tick.
     */
    private static OptionalLong eldestChild(long pid) {
        record Child(long pid, long start, long nsPid) {}
        List<Child> living = ProcessHandle.of(pid).stream()
                .flatMap(ProcessHandle::children)
                .map(p -> new Child(p.pid(), Procs.startTime(p.pid()).orElse(-1), Procs.namespacePid(p.pid())))
                .filter(c -> Procs.isSame(c.pid(), c.start()))
                .sorted(Comparator.comparingLong(Child::start).thenComparingLong(Child::nsPid))
                .toList();
        return living.isEmpty()
                ? OptionalLong.empty()
                : OptionalLong.of(living.getFirst().pid());
    }

    /** Runs {@code kill -s SIG -- target}; false when there is no such process. */
    private static boolean send(String target, String signal) throws DriverException {
        try {
            Process kill = new ProcessBuilder("kill", "-s", signal.substring(3), "--", target)
                    .redirectErrorStream(true)
                    .start();
            String out = new String(kill.getInputStream().readNBytes(4096));
            if (!kill.waitFor(10, TimeUnit.SECONDS)) {
                kill.destroyForcibly();
                throw new DriverException("kill -" + signal + " " + target + " hung");
            }
            if (kill.exitValue() == 0) {
                return true;
            }
            if (out.contains("No such process")) {
                return false;
            }
            throw new DriverException("kill -" + signal + " " + target + " failed: " + out.trim());
        } catch (IOException e) {
            throw new DriverException("cannot run kill: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DriverException("interrupted while sending " + signal + " to " + target, e);
        }
    }
}
