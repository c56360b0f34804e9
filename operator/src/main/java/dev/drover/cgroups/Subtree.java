package dev.drover.cgroups;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The cgroups below one cgroup directory: a task run as root may make cgroups inside its own and move processes
 * there, out of its own cgroup.procs, so a kill and a removal walk the whole subtree. No link is followed.
 */
final class Subtree {

    /** Most cgroups a walk takes in; a task that made more gets an error naming them, not an endless walk. */
    static final int LIMIT = 10_000;

    private Subtree() {}

    /**
     * {@code top} and every cgroup directory below it, each before those inside it, so the reversed list removes
     * the deepest first. Empty when {@code top} is gone; one that goes during the walk is left out.
     */
    static List<Path> of(Path top) throws IOException {
        List<Path> found = new ArrayList<>();
        Deque<Path> toList = new ArrayDeque<>();
        if (CgroupFiles.isDirectory(top)) {
            toList.push(top);
        }
        while (!toList.isEmpty()) {
            Path dir = toList.pop();
            found.add(dir);
            List<Path> inside = new ArrayList<>();
            try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir, CgroupFiles::isDirectory)) {
                entries.forEach(inside::add);
            } catch (NoSuchFileException e) {
                continue; // removed meanwhile: nothing is below it any more
            }
            if (found.size() + toList.size() + inside.size() > LIMIT) {
                throw new IOException("cgroup " + top + " has more than " + LIMIT + " cgroups below it; remove those"
                        + " its task made (rmdir, deepest first) once their processes are ended");
            }
            inside.reversed().forEach(toList::push);
        }
        return found;
    }

    /**
     * The processes in each of {@code tops} and every cgroup below them, without repeats; a directory without
     * cgroup.procs holds none.
     */
    static List<Long> pids(List<Path> tops) throws IOException {
        Set<Long> pids = new LinkedHashSet<>();
        for (Path top : tops) {
            for (Path dir : of(top)) {
                Path procs = dir.resolve("cgroup.procs");
                try {
                    pids.addAll(CgroupFiles.readPids(procs));
                } catch (IOException e) {
                    // a cgroup removed since it was listed held no process then
                    if (CgroupFiles.exists(procs)) {
                        throw e;
                    }
                }
            }
        }
        return new ArrayList<>(pids);
    }
}
