package dev.drover.driver.host;

import dev.drover.common.UserText;
import dev.drover.driver.DriverStartException;
import dev.drover.driver.ExitResult;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/** What a task's {@link Supervisor} writes to its status dir: the task's pid file and its exit status. */
final class StatusFiles {

    /** How long a starting task has to write its pid file. */
    static final Duration PID_WAIT = Duration.ofSeconds(10);
    /** More than any exit file holds ({@code signal 64 core}). */
    private static final int MAX_EXIT_BYTES = 64;

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

    /**
     * How the task ended, from its exit file: {@code exit N}, {@code signal N} or {@code signal N core} as
     * {@link TaskMonitor}'s binary writes it, or a bare number as the shell supervisor writes it (tasks of older agents
     * and of agents without the monitor), where 129 to 192 can only be read as signal N - 128.
     */
    static ExitResult readExit(Path exitFile) {
        String text;
        try (InputStream in = Files.newInputStream(exitFile, LinkOption.NOFOLLOW_LINKS)) {
            text = new String(in.readNBytes(MAX_EXIT_BYTES), StandardCharsets.US_ASCII);
        } catch (IOException e) {
            return lost(exitFile, e.getMessage());
        }
        return parseExit(text).orElseGet(() -> lost(exitFile, "unreadable: " + UserText.quote(text.strip())));
    }

    static Optional<ExitResult> parseExit(String text) {
        String[] words = text.strip().split(" ");
        try {
            if (words.length == 1) {
                int code = Integer.parseInt(words[0]);
                return Optional.of(
                        code > 128 && code < 128 + 65 ? ExitResult.signalled(code - 128) : ExitResult.code(code));
            }
            int n = Integer.parseInt(words[1]);
            if (words[0].equals("exit") && words.length == 2 && n >= 0 && n <= 255) {
                return Optional.of(ExitResult.code(n));
            }
            if (words[0].equals("signal")
                    && n > 0
                    && n < 65
                    && (words.length == 2 || words.length == 3 && words[2].equals("core"))) {
                return Optional.of(ExitResult.signalled(n));
            }
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
        return Optional.empty();
    }

    private static ExitResult lost(Path exitFile, String why) {
        return new ExitResult(
                -1,
                null,
                "the task's supervisor ended without recording an exit status (" + exitFile + ": " + why + ")");
    }
}
