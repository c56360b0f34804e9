package dev.drover.driver.exec;

import dev.drover.common.UserText;
import dev.drover.driver.DriverStartException;
import dev.drover.driver.TaskConfig;
import dev.drover.driver.TaskMount;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Where an exec task's volumes go on the host: a destination is written as a container sees it, {@code /local/X}
 * being the task's {@code local/X} and {@code /alloc/X} its allocation directory's {@code X}, since an exec task sees
 * the host's root file system and only those directories are its own. The mount points are made here, by the agent,
 * one directory at a time, never through a symbolic link; the setup shell checks again, on the descriptors it mounts
 * through ({@link Namespaces#SETUP}), since the task's siblings may change its directories in between.
 */
final class VolumeBinds {

    /** A volume bound at {@code target}, a real path of the host (no link on it). */
    record Bind(Path source, Path target, boolean readOnly) {}

    private VolumeBinds() {}

    /** The task's mounts as host paths, their mount points made. */
    static List<Bind> prepare(TaskConfig task) throws DriverStartException {
        List<Bind> out = new ArrayList<>();
        for (TaskMount m : task.attachments().mounts()) {
            String d = m.destination();
            Path base;
            String rest;
            if (d.startsWith("/local/")) {
                base = task.taskDir().resolve("local");
                rest = d.substring("/local/".length());
            } else if (d.startsWith("/alloc/")) {
                base = task.allocDir();
                rest = d.substring("/alloc/".length());
            } else {
                throw new DriverStartException(
                        "the exec driver mounts volumes only below /local/ and /alloc/, not at " + UserText.quote(d),
                        false);
            }
            out.add(new Bind(m.source(), mountPoint(base, rest), m.readOnly()));
        }
        return out;
    }

    /** {@code base/rest}, made one directory at a time where missing; refused where a link or file is on the way. */
    private static Path mountPoint(Path base, String rest) throws DriverStartException {
        try {
            if (!Files.isDirectory(base, LinkOption.NOFOLLOW_LINKS)) {
                throw new DriverStartException(
                        base + " is not a directory (a link?): no volume is mounted in it", false);
            }
            Path at = base.toRealPath();
            for (String part : rest.split("/")) {
                if (part.isEmpty() || part.equals(".") || part.equals("..")) {
                    throw new DriverStartException(
                            "volume destination " + UserText.quote(rest) + " is not clean", false);
                }
                at = at.resolve(part);
                if (Files.isSymbolicLink(at)) {
                    throw new DriverStartException(
                            at + " is a symbolic link, which a volume is never mounted through: remove it", false);
                }
                if (!Files.exists(at, LinkOption.NOFOLLOW_LINKS)) {
                    Files.createDirectory(at);
                } else if (!Files.isDirectory(at, LinkOption.NOFOLLOW_LINKS)) {
                    throw new DriverStartException(at + " is not a directory: no volume is mounted on it", false);
                }
            }
            return at;
        } catch (IOException e) {
            throw new DriverStartException("cannot make the volume's mount point: " + e.getMessage(), false, e);
        }
    }
}
