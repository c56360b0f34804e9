package dev.drover.network;

import dev.drover.common.MountTable;
import dev.drover.common.UserText;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Persistent network namespaces in a directory the agent owns ({@code <dataDir>/netns}, mode 0700): each is an nsfs
 * bind mount on a file of its name there, made by {@code unshare --net=FILE true}, so it outlives every process in it
 * (and the agent) until {@link #remove} unmounts it. Whether one exists is read from {@code /proc/self/mountinfo}, never
 * guessed from the file: a file left by a crash between its creation and its mount is no namespace. No link is
 * followed: a name whose file is a symbolic link is refused.
 *
 * <p>The mounts are in the agent's mount namespace; a process joins one with {@code nsenter --net=FILE} or
 * {@code setns} on the file. A node reboot drops them (and the namespaces): {@link #exists} then says so.
 */
public final class NetNs {

    /** A namespace's name: a file name of letters, digits, {@code -}, {@code _} and {@code .}, not dots alone. */
    static final Pattern NAME = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}");

    private static final Duration LIMIT = Duration.ofSeconds(30);
    private static final int MAX_OUTPUT = 64 * 1024;

    private final Path dir;

    private NetNs(Path dir) {
        this.dir = dir;
    }

    /**
     * The namespaces in {@code dir}, made (0700) when missing. The directory's real path is what the mount table
     * names, so it is resolved here once; the directory itself must not be a link.
     */
    public static NetNs in(Path dir) throws IOException {
        Path abs = dir.toAbsolutePath().normalize();
        if (Files.isSymbolicLink(abs)) {
            throw new IOException("the network namespace directory " + abs + " is a symbolic link; it must be a"
                    + " directory the agent owns");
        }
        Files.createDirectories(abs);
        Files.setPosixFilePermissions(abs, PosixFilePermissions.fromString("rwx------"));
        return new NetNs(abs.toRealPath());
    }

    /** The directory holding the namespaces' files. */
    public Path dir() {
        return dir;
    }

    /** Where the namespace {@code name} is (or would be). */
    public Path path(String name) {
        if (!NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("not a network namespace name: " + UserText.quote(name));
        }
        return dir.resolve(name);
    }

    /**
     * Makes the namespace {@code name}: a new network namespace with only a loopback device (down), bound to
     * {@link #path}. Refused when one is already there; a plain file left there by a crash is reused.
     */
    public Path create(String name) throws IOException {
        Path file = path(name);
        refuseLink(file);
        if (exists(file)) {
            throw new FileAlreadyExistsException(file.toString(), null, "a network namespace is already there");
        }
        try {
            Files.newByteChannel(
                            file,
                            Set.of(StandardOpenOption.CREATE, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS),
                            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("r--------")))
                    .close();
        } catch (FileAlreadyExistsException e) {
            // a crash's leftover, checked above to be no namespace: the mount goes over it
        }
        run(List.of("unshare", "--net=" + file, "true"), "make the network namespace " + file);
        if (!exists(file)) {
            throw new IOException("unshare --net=" + file + " succeeded, yet no namespace is mounted there");
        }
        return file;
    }

    /** Whether a network namespace is mounted at {@code file}. A link there is refused, never followed. */
    public boolean exists(Path file) throws IOException {
        refuseLink(file);
        String target = file.toAbsolutePath().normalize().toString();
        for (String line : Files.readAllLines(Path.of("/proc/self/mountinfo"), StandardCharsets.UTF_8)) {
            int dash = line.indexOf(" - ");
            String[] f = line.split(" ", 6);
            if (dash < 0 || f.length < 6) {
                continue;
            }
            String fsType = line.substring(dash + 3).split(" ", 2)[0];
            if (fsType.equals("nsfs") && MountTable.unescape(f[4]).equals(target)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Unmounts and deletes the namespace at {@code file}, which must be in this directory; nothing there is no
     * failure, so a second removal is harmless. Processes still in the namespace keep it alive, unnamed, until
     * they end.
     */
    public void remove(Path file) throws IOException {
        if (!file.toAbsolutePath().normalize().getParent().equals(dir)) {
            throw new IllegalArgumentException(
                    "not a network namespace of " + dir + ": " + UserText.bare(file.toString()));
        }
        refuseLink(file);
        // a namespace mounted twice (by hand) needs two unmounts; the bound is the count a mount table could hold
        for (int i = 0; i < 16 && exists(file); i++) {
            run(List.of("umount", "--no-canonicalize", file.toString()), "unmount the network namespace " + file);
        }
        if (exists(file)) {
            throw new IOException("the network namespace " + file + " is still mounted after 16 unmounts");
        }
        try {
            Files.delete(file);
        } catch (NoSuchFileException e) {
            // already gone
        }
    }

    private static void refuseLink(Path file) throws IOException {
        if (Files.isSymbolicLink(file)) {
            throw new IOException("refusing the network namespace " + file + ": it is a symbolic link");
        }
    }

    private static void run(List<String> argv, String what) throws IOException {
        BoundedProcess.Outcome o;
        try {
            o = BoundedProcess.run(argv, Map.of("PATH", CniPlugins.path()), new byte[0], LIMIT, MAX_OUTPUT);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while trying to " + what, e);
        }
        if (o.exit() != 0) {
            throw new IOException("cannot " + what + ": " + String.join(" ", argv) + " "
                    + (o.timedOut() ? "ran past " + LIMIT.toSeconds() + " s" : "exited " + o.exit()) + ": "
                    + UserText.cutEscaped(o.stderr().strip(), 500));
        }
    }
}
