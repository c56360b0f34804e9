package dev.drover.driver.host;

import dev.drover.driver.DriverStartException;
import dev.drover.driver.TaskConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * The environment a host-process task runs with, and nothing else: a default {@code PATH}, {@code HOME} (the task
 * directory), then the task's own variables (Drover's, the devices', the spec's), which may override both. None
 * of the agent's environment reaches it. The supervisor never runs with it either: it is written to a file
 * (readable by its owner only: it holds secret values) that the last shell before the task's {@code exec}
 * sources, so a task's {@code PATH} or {@code LD_PRELOAD} cannot break or enter the supervisor, and no value
 * ever appears on a command line (where {@code ps} and audit logs would show it).
 */
final class TaskEnvironment {

    /** The task's PATH unless it sets one, and the supervisor's (which never takes the task's). */
    static final String DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    /** What a shell would pass on by itself; the launch file unsets those the task does not set. */
    private static final Set<String> SHELL_OWNED = Set.of("PWD", "OLDPWD", "SHLVL", "_");

    private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    private TaskEnvironment() {}

    /** The task's whole environment. */
    static Map<String, String> of(TaskConfig task) {
        Map<String, String> env = new TreeMap<>();
        env.put("PATH", DEFAULT_PATH);
        env.put("HOME", task.taskDir().toString());
        env.putAll(task.env());
        return env;
    }

    /**
     * Writes {@code env} as a file for {@code /bin/sh} to source: one {@code export NAME='value'} per variable,
     * each value single-quoted (a quote inside becomes {@code '\''}), so no value can run as code whatever it
     * holds (newlines, {@code $(...)}, quotes). Names must be shell identifiers and values free of NUL, which no
     * environment can carry; anything else is refused.
     */
    static void write(Path file, Map<String, String> env) throws DriverStartException {
        StringBuilder script = new StringBuilder("unset");
        for (String owned : SHELL_OWNED) {
            script.append(' ').append(owned);
        }
        script.append('\n');
        for (Map.Entry<String, String> e : env.entrySet()) {
            if (!NAME.matcher(e.getKey()).matches()) {
                throw new DriverStartException(
                        "environment variable name '" + e.getKey() + "' is not a shell"
                                + " identifier (letters, digits and '_', not starting with a digit)",
                        false);
            }
            if (e.getValue().indexOf('\0') >= 0) {
                throw new DriverStartException(
                        "environment variable " + e.getKey() + " contains a NUL character,"
                                + " which no process environment can hold",
                        false);
            }
            script.append("export ")
                    .append(e.getKey())
                    .append("='")
                    .append(e.getValue().replace("'", "'\\''"))
                    .append("'\n");
        }
        try {
            Files.deleteIfExists(file);
            Files.writeString(
                    Files.createFile(
                            file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"))),
                    script,
                    StandardCharsets.UTF_8,
                    StandardOpenOption.WRITE,
                    LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
            throw new DriverStartException(
                    "cannot write the task's environment to " + file + ": " + e.getMessage(), true, e);
        }
    }
}
