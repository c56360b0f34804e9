package dev.drover.driver.host;

import dev.drover.driver.DriverStartException;
import dev.drover.driver.TaskConfig;
import dev.drover.fs.DirectoryHandle;
import dev.drover.fs.TreeWalk;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.stream.Stream;

/**
 * The user a task runs as, by number: a name is looked up in the host's {@code /etc/passwd} (its primary group
 * with it); a uid that names no one there runs with a gid of the same number.
 */
public record TaskUser(String name, long uid, long gid) {

    /** The most lines of {@code /etc/passwd} read; a bigger file is not a host's user list. */
    private static final int MAX_LINES = 100_000;

    /** Finds {@code user} (already validated: a login name or a uid) in {@code passwd}. */
    public static TaskUser resolve(String user, Path passwd) throws DriverStartException {
        boolean numeric = !user.isEmpty() && user.chars().allMatch(Character::isDigit);
        List<String> lines;
        try (Stream<String> s = Files.lines(passwd, StandardCharsets.UTF_8)) {
            lines = s.limit(MAX_LINES).toList();
        } catch (IOException | java.io.UncheckedIOException e) {
            throw new DriverStartException("cannot read " + passwd + " to find user " + user + ": " + e, true, e);
        }
        for (String line : lines) {
            String[] f = line.split(":", -1);
            if (f.length < 4) {
                continue;
            }
            try {
                if (numeric ? f[2].equals(user) : f[0].equals(user)) {
                    return new TaskUser(f[0], Long.parseLong(f[2]), Long.parseLong(f[3]));
                }
            } catch (NumberFormatException notAnEntry) {
                // a torn or hand-edited line: not a user
            }
        }
        if (numeric) {
            long uid = Long.parseLong(user);
            return new TaskUser(user, uid, uid);
        }
        throw new DriverStartException(
                "user " + user + " does not exist on this node (not in " + passwd + "); give an existing name or a uid",
                false);
    }

    /**
     * Gives the task's own directories ({@code local/}, {@code tmp/}, {@code secrets/} and what they hold) to this
     * user, {@code secrets/} with mode 0700 so that no other task's user can read it. Links are changed, never
     * followed, and a file with more than one hard link keeps its owner: a task that linked another's file (the
     * agent's store, {@code /etc/shadow} on the same file system) into its directory is not given it at its next
     * start. The walk holds each directory by descriptor ({@link TreeWalk}), so a process of the task's user that
     * swaps a sub-directory for a link to {@code /etc} while it runs cannot have {@code /etc}'s files given away. The
     * task directory itself stays the agent's: it holds the supervisor's status files.
     */
    public void own(TaskConfig task) throws DriverStartException {
        for (Path dir : List.of(task.taskDir().resolve("local"), task.taskDir().resolve("tmp"), task.secretsDir())) {
            try {
                Files.createDirectories(dir);
                try (DirectoryHandle root = DirectoryHandle.open(dir)) {
                    Files.setAttribute(root.path(), "unix:uid", (int) uid);
                    Files.setAttribute(root.path(), "unix:gid", (int) gid);
                    TreeWalk.walk(root, TreeWalk.PATH_DEPTH, (in, name, path, attrs) -> {
                        if (attrs.isRegularFile() && in.links(name) > 1) {
                            return false; // a hard link an earlier run made to a file not its own: never given away
                        }
                        in.chown(name, (int) uid, (int) gid);
                        return true;
                    });
                    if (dir.equals(task.secretsDir()) || dir.endsWith("tmp")) {
                        Files.setPosixFilePermissions(root.path(), PosixFilePermissions.fromString("rwx------"));
                    }
                }
            } catch (IOException | java.io.UncheckedIOException | UnsupportedOperationException e) {
                throw new DriverStartException("cannot give " + dir + " to user " + name + ": " + e, true, e);
            }
        }
    }
}
