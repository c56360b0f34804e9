package dev.drover.driver.rawexec;

import dev.drover.api.Signals;
import dev.drover.driver.DriverStartException;
import dev.drover.driver.ExitResult;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/** What a task's {@link Supervisor} writes to its status dir: the task's pid file and its exit status. */
final class StatusFiles {

    /** How long a starting task has to write its pid file. */
    static final Duration PID_WAIT = Duration.ofSeconds(10);

    private StatusFiles() {}

    /**
     * What the supervisor's pid file says: the task's PID and start time. A supervisor of an older agent wrote the
     * PID alone: its start time is -1 here, which no process has.
     */
    record PidFile(long pid, long startTime) {

        static Optional<PidFile> read(Path file) {
            try {
                String[] words = Files.readString(file).trim().split(" ");
                return Optional.of(
                        new PidFile(Long.parseLong(words[0]), words.length > 1 ? Long.parseLong(words[1]) : -1));
            } catch (IOException | NumberFormatException e) {
                return Optional.empty();
            }
        }
    }

    static PidFile awaitPid(Path status, Process supervisor) throws DriverStartException {
        long deadline = System.nanoTime() + PID_WAIT.toNanos();
        Path pidFile = status.resolve("pid");
        while (System.nanoTime() < deadline) {
            if (Files.exists(pidFile)) {
                return PidFile.read(pidFile)
                        .orElseThrow(() -> new DriverStartException("unreadable pid file " + pidFile, true));
            }
            if (!supervisor.isAlive() && !Files.exists(pidFile)) {
                if (readExit(status.resolve("exit")).exitCode() == Supervisor.CANNOT_JOIN) {
                    throw new DriverStartException(
                            "the task could not join its cgroup (its stderr log says why)", true);
                }
                throw new DriverStartException(
                        "the task's supervisor exited before starting it (exit " + supervisor.exitValue()
                                + "); is setsid installed?",
                        true);
            }
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                supervisor.destroyForcibly();
                throw new DriverStartException("interrupted while starting", true, e);
            }
        }
        supervisor.destroyForcibly();
        throw new DriverStartException("the task did not start within " + PID_WAIT.toSeconds() + "s", true);
    }

    static ExitResult readExit(Path exitFile) {
        try {
            int code = Integer.parseInt(Files.readString(exitFile).trim());
            return code > 128 && code < 128 + 65
                    ? ExitResult.signalled(Signals.name(code - 128))
                    : ExitResult.code(code);
        } catch (IOException | NumberFormatException e) {
            return new ExitResult(
                    -1,
                    null,
                    "the task's supervisor ended without recording an exit status (" + exitFile + ": " + e.getMessage()
                            + ")");
        }
    }
}
