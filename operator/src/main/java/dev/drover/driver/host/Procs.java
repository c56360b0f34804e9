package dev.drover.driver.host;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

/** Facts about host processes from {@code /proc}. */
final class Procs {

    /** Clock ticks per second of /proc times; 100 on every Linux this runs on. */
    private static final long TICKS_PER_SECOND = 100;

    private Procs() {}

    /**
     * The start time of {@code pid} in clock ticks since boot (field 22 of
     * {@code /proc/PID/stat}): with the PID, it names one process for good, since a
     * reused PID has a later start time. Empty when there is no such process.
     */
    static OptionalLong startTime(long pid) {
        String[] f = statFields(pid);
        return f == null ? OptionalLong.empty() : OptionalLong.of(Long.parseLong(f[19]));
    }

    /** Whether {@code pid} is alive and is the process that started at {@code startTime}. */
    static boolean isSame(long pid, long startTime) {
        OptionalLong now = startTime(pid);
        if (now.isEmpty() || now.getAsLong() != startTime) {
            return false;
        }
        String[] f = statFields(pid);
        return f != null && !f[0].equals("Z"); // a zombie has exited already
    }

    /** The process group of {@code pid} as the host numbers it; empty when there is no such process. */
    static OptionalLong processGroup(long pid) {
        String[] f = statFields(pid);
        return f == null ? OptionalLong.empty() : OptionalLong.of(Long.parseLong(f[2]));
    }

    /** A process known by its PID and start time together. */
    record Identity(long pid, long start) {}

    /**
     * The process group {@code p} is in, read at once with its start time; empty when that process is gone (exited
     * and reaped, or its PID another's now). A zombie counts: until it is reaped, it holds its group's number.
     */
    static OptionalLong groupOf(Identity p) {
        String[] f = statFields(p.pid());
        try {
            return f != null && Long.parseLong(f[19]) == p.start()
                    ? OptionalLong.of(Long.parseLong(f[2]))
                    : OptionalLong.empty();
        } catch (NumberFormatException | ArrayIndexOutOfBoundsException e) {
            return OptionalLong.empty();
        }
    }

    /** The processes in process group {@code pgid} now, as {@code /proc} lists them. */
    static List<Identity> groupMembers(long pgid) {
        List<Identity> members = new ArrayList<>();
        try (DirectoryStream<Path> all = Files.newDirectoryStream(Path.of("/proc"), "[0-9]*")) {
            for (Path p : all) {
                long pid;
                try {
                    pid = Long.parseLong(p.getFileName().toString());
                } catch (NumberFormatException notAProcess) {
                    continue;
                }
                String[] f = statFields(pid);
                if (f != null && Long.parseLong(f[2]) == pgid && !f[0].equals("Z")) {
                    members.add(new Identity(pid, Long.parseLong(f[19])));
                }
            }
        } catch (IOException | NumberFormatException e) {
            return members;
        }
        return members;
    }

    /** The command line of {@code pid}, arguments joined by spaces; empty when there is no such process. */
    static String commandLine(long pid) {
        try {
            return new String(
                            Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline")),
                            java.nio.charset.StandardCharsets.UTF_8)
                    .replace('\0', ' ')
                    .trim();
        } catch (IOException e) {
            return "";
        }
    }

    /**
     * The PID {@code pid} has in the innermost PID namespace it is in (the last number of {@code NSpid} in
     * {@code /proc/PID/status}); {@code pid} itself when that is the host's, or unknown.
     */
    static long namespacePid(long pid) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
                if (line.startsWith("NSpid:")) {
                    String[] words = line.substring("NSpid:".length()).trim().split("\\s+");
                    return Long.parseLong(words[words.length - 1]);
                }
            }
        } catch (IOException | NumberFormatException e) {
            return pid;
        }
        return pid;
    }

    /** User plus system CPU time of {@code pid}. */
    static Duration cpuTime(long pid) {
        String[] f = statFields(pid);
        if (f == null) {
            return Duration.ZERO;
        }
        long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]);
        return Duration.ofMillis(ticks * 1000 / TICKS_PER_SECOND);
    }

    /** Resident memory of {@code pid} in bytes, 0 when unknown. */
    static long residentBytes(long pid) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (IOException | NumberFormatException e) {
            return 0;
        }
        return 0;
    }

    /** The fields of /proc/PID/stat after the command name, from field 3 (state) on; null if gone. */
    private static String[] statFields(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            return stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
        } catch (IOException | StringIndexOutOfBoundsException e) {
            return null;
        }
    }
}
