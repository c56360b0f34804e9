package dev.drover.cgroups;

/** Which cgroup hierarchy the node uses. */
public enum CgroupVersion {
    /** One hierarchy per controller (or per few co-mounted controllers): cpu, cpuacct, memory, pids, freezer, devices. */
    V1,
    /** The unified hierarchy: one tree holding every controller. */
    V2
}
