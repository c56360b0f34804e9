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
 * there, out of its own cgroup.procs, so a kill and a removal walk the whole subtree. A walk takes in at most a
 * bounded number of cgroups; a task may make more, and then a walk sees part of its subtree ({@link Walk#whole()}
 * false), which a kill and a removal make smaller by removing the empty cgroups it saw. No link is followed.
 */
final class Subtree {

    /** Most cgroups one walk takes in, so a task that made ever more cannot make a walk endless. */
    static final int LIMIT = 10_000;

    private final int limit;

    /** Walks that take in at most {@code limit} cgroups ({@link #LIMIT} but in tests). */
    Subtree(int limit) {
        if (limit < 1) {
            throw new IllegalArgumentException("a subtree walk must take in at least its top cgroup, not " + limit);
        }
        this.limit = limit;
    }

    int limit() {
        return limit;
    }

    /**
     * What one walk found below a cgroup.
     *
     * @param cgroups the top and the cgroups found below it, each before those inside it, so the reversed list
     *     removes the deepest first; empty when the top is gone
     * @param whole whether those are all there were; false when the walk stopped at the limit
     */
    record Walk(List<Path> cgroups, boolean whole) {

        Walk {
            cgroups = List.copyOf(cgroups);
        }

        /** Those below the top, deepest first. */
        List<Path> belowDeepestFirst() {
            return cgroups.isEmpty()
                    ? List.of()
                    : cgroups.subList(1, cgroups.size()).reversed();
        }
    }

    /**
     * The processes that walks of some cgroups saw.
     *
     * @param pids those in the cgroups walked, without repeats
     * @param walks one per top cgroup
     */
    record Seen(List<Long> pids, List<Walk> walks) {

        Seen {
            pids = List.copyOf(pids);
            walks = List.copyOf(walks);
        }

        /** Nothing seen, and nothing out of sight: the cgroups are empty. */
        static final Seen EMPTY = new Seen(List.of(), List.of());

        /** Whether every walk took in its whole subtree, so {@link #pids} are all there are. */
        boolean whole() {
            return walks.stream().allMatch(Walk::whole);
        }

        boolean empty() {
            return pids.isEmpty() && whole();
        }
    }

    /**
     * {@code top} and the cgroups below it, at most {@link #limit()} of them: the cgroups directly in a cgroup are
     * taken in when it is, so what a walk stopped at the limit saw is the top and the cgroups inside what it saw.
     * One that goes during the walk is left out.
     */
    Walk walk(Path top) throws IOException {
        List<Path> found = new ArrayList<>();
        Deque<Path> toList = new ArrayDeque<>();
        boolean whole = true;
        if (CgroupFiles.isDirectory(top)) {
            toList.push(top);
        }
        int taken = toList.size();
        while (!toList.isEmpty()) {
            Path dir = toList.pop();
            found.add(dir);
            List<Path> inside = new ArrayList<>();
            try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir, CgroupFiles::isDirectory)) {
                for (Path entry : entries) {
                    if (taken == limit) {
                        whole = false; // more than a walk takes in: the rest is read no further
                        break;
                    }
                    inside.add(entry);
                    taken++;
                }
            } catch (NoSuchFileException e) {
                continue; // removed meanwhile: nothing is below it any more
            }
            inside.reversed().forEach(toList::push);
        }
        return new Walk(found, whole);
    }

    /**
     * The processes in each of {@code tops} and the cgroups below them that a walk takes in; a directory without
     * cgroup.procs holds none.
     */
    Seen seen(List<Path> tops) throws IOException {
        Set<Long> pids = new LinkedHashSet<>();
        List<Walk> walks = new ArrayList<>();
        for (Path top : tops) {
            Walk walk = walk(top);
            walks.add(walk);
            for (Path dir : walk.cgroups()) {
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
        return new Seen(new ArrayList<>(pids), walks);
    }

    /**
     * The processes in each of {@code tops} and every cgroup below them; an error, rather than some of them, when a
     * task made more cgroups below one than a walk takes in.
     */
    List<Long> pids(List<Path> tops) throws IOException {
        Seen seen = seen(tops);
        for (int i = 0; i < tops.size(); i++) {
            if (!seen.walks().get(i).whole()) {
                throw new IOException("cgroup " + tops.get(i) + " has more than " + limit + " cgroups below it,"
                        + " more than one walk takes in; remove those its task made (rmdir, deepest first) once their"
                        + " processes are ended");
            }
        }
        return seen.pids();
    }
}
