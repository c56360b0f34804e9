package dev.drover.e2e;

import dev.drover.cgroups.CgroupParent;
import dev.drover.cgroups.Cgroups;
import java.io.IOException;
import java.time.Duration;
import java.util.UUID;

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
            Cgroups.detect().removeWithIdleChildren(CgroupParent.own(), name, TIMEOUT);
        } catch (IOException e) {
            System.err.println("TestCgroups: cgroup " + name + " left behind: " + e.getMessage());
        }
    }
}
