package dev.drover.e2e;

import dev.drover.cgroups.Cgroup;
import dev.drover.cgroups.CgroupParent;
import dev.drover.cgroups.Cgroups;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.stream.Stream;

/**
 * Cgroup parents for the agents tests start: a name of their own below this process's cgroup, and its removal with
 * the empty task cgroups in it, so that no test leaves a cgroup behind.
 */
final class TestCgroups {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private TestCgroups() {}

    /** A fresh parent name, {@code drover-it-XXXXXXXX}, relative to this process's cgroup. */
    static String newName() {
        return "drover-it-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /**
     * Removes parent {@code name} below this process's cgroup and the task cgroups in it that hold no process (a
     * task a test left running keeps its cgroup, and so the parent: the test must end what it started). Nothing
     * there, or no cgroups on this machine, is fine.
     */
    static void remove(String name) throws InterruptedException {
        try {
            Cgroups cgroups = Cgroups.detect();
            Optional<Cgroup> parent = cgroups.find(CgroupParent.own(), name);
            if (parent.isEmpty()) {
                return; // the agent ran no raw_exec task, or had no cgroups
            }
            CgroupParent below = CgroupParent.own().child(name);
            for (String task : childNames(parent.get())) {
                Optional<Cgroup> child = cgroups.find(below, task);
                if (child.isPresent() && child.get().pids().isEmpty()) {
                    child.get().remove(TIMEOUT);
                }
            }
            parent.get().remove(TIMEOUT);
        } catch (IOException e) {
            System.err.println("TestCgroups: cgroup " + name + " left behind: " + e.getMessage());
        }
    }

    private static Set<String> childNames(Cgroup cgroup) throws IOException {
        Set<String> names = new TreeSet<>();
        for (Path dir : cgroup.directories()) {
            try (Stream<Path> children = Files.list(dir)) {
                children.filter(c -> Files.isDirectory(c, LinkOption.NOFOLLOW_LINKS))
                        .forEach(c -> names.add(c.getFileName().toString()));
            }
        }
        return names;
    }
}
