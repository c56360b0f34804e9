package dev.drover.credentials;

import dev.drover.common.UserText;
import dev.drover.fs.DirectoryHandle;
import dev.drover.fs.PathNames;
import dev.drover.fs.TreeRemover;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.List;
import java.util.function.Supplier;

/**
 * Writes one file (the ServiceAccount token, say) into a directory of a task's that the task itself can write in,
 * {@code secrets/} for one, at any moment, links to {@code /etc/shadow} included.
 *
 * <p>Why each step is safe: the task directory is the agent's, so the path to it is trusted; below it every
 * directory is opened by descriptor without following a link ({@link DirectoryHandle}), and a link or anything but a
 * directory is refused. The new content goes to a fresh file under a random name, created with {@code O_CREAT |
 * O_EXCL | O_NOFOLLOW} (which fails on anything already there, a planted link included; another name is tried),
 * written and synced, then given the directory's owner and the mode through its own descriptor (never by name: a
 * hard link the task put at the name would otherwise be chown'ed), and renamed over the target ({@code rename(2)}
 * replaces the name, whatever it is, and never follows it; a directory there makes it fail). The file belongs to
 * the directory's owner, so to the task's user, whoever that is. Writers of the same file must not run at once.
 */
public final class TaskFileWriter {

    /** The most one file may hold. */
    public static final int MAX_BYTES = 4 << 20;

    /** Owner-only, as a credential should be. */
    public static final int DEFAULT_MODE = 0600;

    private static final int ATTEMPTS = 8;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Supplier<String> tempNames;

    public TaskFileWriter() {
        this(() -> HexFormat.of().formatHex(randomBytes()));
    }

    /** With the random part of temporary names given, so tests can plant things at them. */
    TaskFileWriter(Supplier<String> tempNames) {
        this.tempNames = tempNames;
    }

    /**
     * Replaces {@code name} in {@code dir} (a path relative to {@code taskDir}: {@code "secrets"}) with {@code
     * content}, mode {@link #DEFAULT_MODE}, atomically: a reader sees the old file or the new one, whole.
     */
    public void write(Path taskDir, String dir, String name, byte[] content) throws IOException {
        write(taskDir, dir, name, content, DEFAULT_MODE);
    }

    /** As {@link #write(Path, String, String, byte[])}, with {@code mode} (at most 0777). */
    public void write(Path taskDir, String dir, String name, byte[] content, int mode) throws IOException {
        checkName(name);
        DirectoryHandle.permissions(mode);
        if (content.length > MAX_BYTES) {
            throw new IllegalArgumentException(
                    "content for " + UserText.quote(name) + " is " + content.length + " bytes, more than " + MAX_BYTES);
        }
        List<String> parts = PathNames.split(dir, "directory");
        try (DirectoryHandle task = DirectoryHandle.open(taskDir);
                DirectoryHandle target = task.openDirectories(parts)) {
            int uid = target.uid();
            int gid = target.gid();
            String temp = createTemp(target, name, content, uid, gid, mode);
            try {
                Files.move(target.resolve(temp), target.resolve(name), StandardCopyOption.ATOMIC_MOVE);
            } catch (IOException e) {
                Files.deleteIfExists(target.resolve(temp));
                throw new IOException("cannot replace " + target.shown(name) + ": " + e.getMessage(), e);
            }
        }
    }

    /** Removes {@code name} from {@code dir}, whatever it is (a directory with all it holds); none there is fine. */
    public void remove(Path taskDir, String dir, String name) throws IOException {
        checkName(name);
        try (DirectoryHandle task = DirectoryHandle.open(taskDir);
                DirectoryHandle target = task.openDirectories(PathNames.split(dir, "directory"))) {
            TreeRemover.remove(target, name);
        }
    }

    private String createTemp(DirectoryHandle target, String name, byte[] content, int uid, int gid, int mode)
            throws IOException {
        for (int i = 0; i < ATTEMPTS; i++) {
            String temp = "..tmp." + tempNames.get();
            try {
                target.createFile(temp, content, uid, gid, mode);
                return temp;
            } catch (FileAlreadyExistsException taken) {
                // something (planted or left over) has that name: never touched, another name is tried
            } catch (IOException e) {
                Files.deleteIfExists(target.resolve(temp));
                throw e;
            }
        }
        throw new IOException(
                "cannot write " + target.shown(name) + ": " + ATTEMPTS + " temporary names in a row were taken");
    }

    private static void checkName(String name) {
        PathNames.component(name);
        if (name.startsWith("..")) {
            throw new IllegalArgumentException(
                    "file name " + UserText.quote(name) + " must not start with .. (kept for the writer's own files)");
        }
    }

    private static byte[] randomBytes() {
        byte[] b = new byte[12];
        RANDOM.nextBytes(b);
        return b;
    }
}
