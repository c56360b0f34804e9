package dev.drover.credentials;

import dev.drover.fs.DirectoryHandle;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.List;
import java.util.SortedSet;

/**
 * The content of one timestamped data directory of a projection: written into a fresh one, or compared with what an
 * existing one holds (so that unchanged content makes no new directory and no swap).
 *
 * <p>Writing happens inside a directory the agent just made, root's and mode 0700 until it is complete, so the task
 * cannot enter it meanwhile; each file is created with {@code O_EXCL} and given its owner and mode through its own
 * descriptor, each sub-directory is made 0700 and handed over once full. Comparing reads an old directory the task
 * may have changed: only regular files of the right owner, mode, size and with one link are read at all.
 */
final class DataDirectory {

    private DataDirectory() {}

    /** Writes all of {@code paths} into {@code root}, then gives {@code root} to {@code uid:gid}, {@code dirMode}. */
    static void write(DirectoryHandle root, ProjectedPaths paths, int uid, int gid, int dirMode) throws IOException {
        writeDirectory(root, "", paths, uid, gid, dirMode);
        root.own(uid, gid, dirMode);
    }

    /**
     * Whether {@code root} holds exactly {@code paths}: the same names in each directory, each file with the same
     * content, mode and owner, each directory with the same mode and owner.
     */
    static boolean matches(DirectoryHandle root, ProjectedPaths paths, int uid, int dirMode) throws IOException {
        return matchesDirectory(root, "", paths, uid, dirMode);
    }

    private static void writeDirectory(DirectoryHandle dir, String at, ProjectedPaths paths, int uid, int gid, int mode)
            throws IOException {
        for (String name : paths.children(at)) {
            String path = ProjectedPaths.child(at, name);
            ProjectedFile file = paths.file(path);
            if (file != null) {
                dir.createFile(name, file.content(), uid, gid, file.mode());
                continue;
            }
            Files.createDirectory(
                    dir.resolve(name), PosixFilePermissions.asFileAttribute(DirectoryHandle.permissions(0700)));
            try (DirectoryHandle sub = dir.openDirectory(name)) {
                writeDirectory(sub, path, paths, uid, gid, mode);
                sub.own(uid, gid, mode);
            }
        }
    }

    private static boolean matchesDirectory(DirectoryHandle dir, String at, ProjectedPaths paths, int uid, int mode)
            throws IOException {
        SortedSet<String> expected = paths.children(at);
        if ((Integer) Files.getAttribute(dir.path(), "unix:uid") != uid
                || ((Integer) Files.getAttribute(dir.path(), "unix:mode") & 07777) != mode) {
            return false;
        }
        List<String> found;
        try {
            found = dir.list(expected.size());
        } catch (IOException tooMany) {
            return false;
        }
        if (found.size() != expected.size() || !expected.containsAll(found)) {
            return false;
        }
        for (String name : expected) {
            String path = ProjectedPaths.child(at, name);
            ProjectedFile file = paths.file(path);
            if (file != null) {
                byte[] content = dir.readIfOwned(name, uid, file.mode(), file.content().length);
                if (content == null || !Arrays.equals(content, file.content())) {
                    return false;
                }
                continue;
            }
            try (DirectoryHandle sub = dir.openDirectory(name)) {
                if (!matchesDirectory(sub, path, paths, uid, mode)) {
                    return false;
                }
            } catch (IOException notADirectory) {
                return false;
            }
        }
        return true;
    }
}
