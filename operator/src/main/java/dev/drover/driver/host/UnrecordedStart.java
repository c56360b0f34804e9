package dev.drover.driver.host;

import dev.drover.driver.DriverException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * A start of a task by an earlier agent that was killed before it stored the handle, found again in the task's status
 * dir: a supervisor still running that very dir, or, when the supervisor died too, a task that runs on with no exit
 * recorded. Starting again would run the task twice, and a destroy that knows no handle would leave it running, so the
 * driver takes it over. Each process is known by its PID and start time together, as its files record them.
 *
 * @param pidStart        the task's start time, -1 when unknown
 * @param supervisorStart the supervisor's start time, -1 when it is gone or unknown
 */
record UnrecordedStart(long pid, long pidStart, long supervisorPid, long supervisorStart) {

    /** The start {@code status} (the status dir of task {@code taskId}) records and that still runs; else empty. */
    static Optional<UnrecordedStart> find(Path status, String taskId) throws DriverException {
        Optional<StatusFiles.PidFile> recorded = StatusFiles.PidFile.read(status.resolve("supervisor"));
        if (recorded.isEmpty()) {
            return Optional.empty(); // none recorded, or a torn file from a crash: nothing is running it
        }
        long supervisorPid = recorded.get().pid();
        // PID and start time name one process; an older agent's supervisor recorded only its PID
        boolean supervisorRuns = (recorded.get().startTime() < 0
                        || Procs.isSame(supervisorPid, recorded.get().startTime()))
                && Procs.commandLine(supervisorPid).contains(status.toString());
        if (!supervisorRuns) {
            // The supervisor is gone (or its PID is another process's now); its task may still run.
            return StatusFiles.PidFile.read(status.resolve("pid"))
                    .filter(p -> !Files.exists(status.resolve("exit")) && Procs.isSame(p.pid(), p.startTime()))
                    .map(p -> new UnrecordedStart(p.pid(), p.startTime(), supervisorPid, -1));
        }
        Path pidFile = status.resolve("pid");
        long deadline = System.nanoTime() + StatusFiles.PID_WAIT.toNanos();
        while (!Files.exists(pidFile) && Procs.startTime(supervisorPid).isPresent() && System.nanoTime() < deadline) {
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new DriverException("interrupted while taking over a running task", e);
            }
        }
        StatusFiles.PidFile started = StatusFiles.PidFile.read(pidFile)
                .orElseThrow(() -> new DriverException("task " + taskId + " has a supervisor (pid " + supervisorPid
                        + ") from an earlier start but no readable pid file"));
        long start = started.startTime() >= 0
                ? started.startTime()
                : Procs.startTime(started.pid()).orElse(-1);
        return Optional.of(new UnrecordedStart(
                started.pid(),
                start,
                supervisorPid,
                Procs.startTime(supervisorPid).orElse(-1)));
    }
}
