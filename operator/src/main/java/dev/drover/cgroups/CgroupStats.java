package dev.drover.cgroups;

import java.time.Duration;

/**
 * A cgroup's resource usage at one moment, as its own files count it.
 *
 * @param memoryBytes memory charged to it (v2 memory.current, v1 memory.usage_in_bytes): anonymous memory, page
 *     cache and kernel memory
 * @param anonBytes anonymous memory (v2 anon, v1 rss)
 * @param fileBytes page cache (v2 file, v1 cache)
 * @param inactiveFileBytes page cache on the inactive list, the first the kernel reclaims (v2 inactive_file, v1
 *     total_inactive_file: both count the cgroups below too, as the usage does)
 * @param memoryLimitBytes its own memory limit (v2 memory.max, v1 memory.limit_in_bytes); 0 when it has none
 * @param cpu CPU time used, user and system
 * @param cpuUser of which in user mode
 * @param cpuSystem of which in the kernel
 */
public record CgroupStats(
        long memoryBytes,
        long anonBytes,
        long fileBytes,
        long inactiveFileBytes,
        long memoryLimitBytes,
        Duration cpu,
        Duration cpuUser,
        Duration cpuSystem) {

    /**
     * The working set as cAdvisor and the kubelet count it: the usage less the inactive page cache, at least 0 (the
     * two files are read one after the other, so the cache may be counted larger than the usage).
     */
    public long workingSetBytes() {
        return Math.max(0, memoryBytes - inactiveFileBytes);
    }
}
