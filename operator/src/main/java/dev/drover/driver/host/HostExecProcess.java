package dev.drover.driver.host;

import dev.drover.cgroups.Cgroup;
import dev.drover.driver.ExecProcess;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A command {@link TaskExec} started: a host process that {@code setsid} made the leader of a session and process
 * group of its own, with its standard streams as {@link ExecPipe}s (whose reads and writes {@link #close()} ends,
 * whoever else holds them), or on a {@link Pty}. In a task with a cgroup the command runs in a cgroup of its own
 * inside the task's, and {@link #close()} kills that cgroup (its cgroup.kill or freeze: nothing forked meanwhile
 * escapes, nor a process that left the group), and at its end kills it again and removes it. In between it ends the
 * process group (the command and all it started that stayed in it, inside a task's PID namespace too: all there is
 * to end for a task without a cgroup) with SIGKILL, and no other process ({@link GroupKill}): the group is signalled,
 * member by member, only while its leader, or a member seen in it at the leader's exit, is in it still (which keeps
 * the number taken).
 */
final class HostExecProcess implements ExecProcess {

    private static final Logger LOG = LoggerFactory.getLogger(HostExecProcess.class);
    private static final Duration KILL_WAIT = Duration.ofSeconds(5);

    private final Process process;
    private final Optional<Pty> pty;
    private final Optional<ExecPipe.Streams> pipes;
    private final OutputStream stdin;
    private final CompletableFuture<Integer> exit;
    private final GroupKill kill;
    private final Procs.Identity leader;
    private final Optional<Cgroup> session;
    /** The members of the command's group when its leader exited; the group is killed while one of them lives. */
    private volatile List<Procs.Identity> outliving = List.of();

    /**
     * @param pipes the command's standard streams when it has no terminal ({@code pty} empty)
     * @param session the command's own cgroup, when the task has one
     */
    HostExecProcess(
            Process process,
            Optional<Pty> pty,
            Optional<ExecPipe.Streams> pipes,
            boolean stdin,
            Optional<Cgroup> session) {
        this.process = process;
        this.session = session;
        this.kill = new GroupKill(GroupKill.HOST);
        // the leader of its group for good (a session leader cannot leave it): the group is the command's while it is
        this.leader =
                new Procs.Identity(process.pid(), Procs.startTime(process.pid()).orElse(-1));
        this.pty = pty;
        this.pipes = pipes;
        if (pty.isPresent()) {
            this.stdin = pty.get().input();
            if (!stdin) {
                closeInput(); // at its end from the start: Ctrl-D typed at once
            }
        } else if (stdin) {
            this.stdin = pipes.flatMap(ExecPipe.Streams::in).orElseThrow().output();
        } else {
            this.stdin = OutputStream.nullOutputStream();
            try {
                this.stdin.close(); // closed from the start: writes fail
            } catch (IOException impossible) {
                throw new IllegalStateException(impossible);
            }
        }
        this.exit = process.onExit().thenApply(p -> {
            try {
                outliving = Procs.groupMembers(p.pid());
            } catch (RuntimeException e) { // an odd /proc: the group is then not killed once its leader is gone
                LOG.warn("cannot list the process group of command {}: {}", p.pid(), e.toString());
            }
            pty.ifPresent(Pty::commandEnded);
            return p.exitValue();
        });
    }

    private void closeInput() {
        try {
            stdin.close();
        } catch (IOException e) {
            LOG.debug("cannot end the terminal's input: {}", e.getMessage());
        }
    }

    @Override
    public OutputStream stdin() {
        return stdin;
    }

    @Override
    public InputStream stdout() {
        return pty.map(Pty::output)
                .orElseGet(() -> pipes.map(p -> p.out().input()).orElseGet(InputStream::nullInputStream));
    }

    @Override
    public InputStream stderr() {
        return pipes.map(p -> p.err().input()).orElseGet(InputStream::nullInputStream);
    }

    @Override
    public void resize(int columns, int rows) throws IOException {
        if (pty.isPresent()) {
            pty.get().resize(columns, rows);
        }
    }

    @Override
    public CompletableFuture<Integer> exit() {
        return exit;
    }

    /**
     * Runs whole on a thread whose interrupt is set, too (a caller cancelled, a pool shutting down): there its waits
     * would end at once and its cgroup files could not be read or written (a file channel of an interrupted thread
     * closes), leaving the command's processes and cgroup. The interrupt is cleared meanwhile and set again after.
     */
    @Override
    public void close() {
        boolean interrupted = Thread.interrupted();
        try {
            interrupted |= endAll();
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** What {@link #close()} does; whether an interrupt came meanwhile, which then ended one wait early. */
    private boolean endAll() {
        boolean interrupted = session.map(HostExecProcess::killAll).orElse(false);
        long group = process.pid();
        List<ProcessHandle> descendants = process.descendants().toList(); // those that left the group too
        Set<Procs.Identity> known = new HashSet<>();
        known.add(leader);
        if (!process.isAlive()) {
            try {
                exit.get(KILL_WAIT.toMillis(), TimeUnit.MILLISECONDS); // the members at its exit are known then
            } catch (InterruptedException e) {
                interrupted = true;
            } catch (ExecutionException | TimeoutException e) {
                LOG.debug("command (pid {}) exit not seen: {}", group, e.toString());
            }
            known.addAll(outliving);
        }
        try {
            if (!kill.kill(group, known, KILL_WAIT)) {
                LOG.warn("the command's process group {} did not end within {} of SIGKILL", group, KILL_WAIT);
            }
        } catch (InterruptedException e) {
            interrupted = true;
        }
        descendants.forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        try {
            if (!process.waitFor(KILL_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                LOG.warn("command (pid {}) did not exit within {} of SIGKILL", group, KILL_WAIT);
            }
        } catch (InterruptedException e) {
            interrupted = true;
        }
        pty.ifPresent(Pty::close);
        pipes.ifPresent(ExecPipe.Streams::close); // ends reads even where a process left the group holds them open
        for (AutoCloseable stream :
                List.of(process.getOutputStream(), process.getInputStream(), process.getErrorStream())) {
            try {
                stream.close();
            } catch (Exception e) {
                // closing a pipe of a dead process: nothing to do about it
            }
        }
        if (session.isPresent()) {
            interrupted |= killAndRemove(session.get());
        }
        return interrupted;
    }

    /**
     * Ends what is in the command's cgroup and then removes it (as {@link #close()} does last, and a start that
     * failed after the cgroup was made), on a thread whose interrupt is set too; the interrupt is kept.
     */
    static void end(Cgroup session) {
        boolean interrupted = Thread.interrupted();
        try {
            interrupted |= killAndRemove(session);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Kills what is in the command's cgroup again, then removes it: rmdir fails while a process is in it, and one
     * may be (still dying of the group's SIGKILL, or it joined after the first kill, or a start failed after the
     * command joined). Whether an interrupt came meanwhile.
     */
    private static boolean killAndRemove(Cgroup session) {
        boolean interrupted = killAll(session);
        try {
            session.remove(KILL_WAIT);
        } catch (IOException e) {
            LOG.warn("the command's cgroup {} stays: {}", session.name(), e.getMessage());
        } catch (InterruptedException e) {
            interrupted = true;
        }
        return interrupted;
    }

    /**
     * Ends every process in the command's cgroup; one left is logged (the task's stop ends it with the task).
     * Whether an interrupt ended the wait early.
     */
    private static boolean killAll(Cgroup session) {
        try {
            session.killAll(KILL_WAIT);
        } catch (IOException e) {
            LOG.warn("the command's cgroup {} is not empty: {}", session.name(), e.getMessage());
        } catch (InterruptedException e) {
            return true;
        }
        return false;
    }
}
