package dev.drover.cgroups;

import java.time.Duration;

/**
 * A cgroup's resource usage at one moment, as its own files count it.
 *
 * @param memoryBytes memory charged to it (v2 memory.current, v1 memory.usage_in_bytes): anonymous memory, page
 *     cache and kernel memory
 * @param anonBytes anonymous memory (v2 anon, v1 rss)
 * @param fileBytes page cache (v2 file, v1 cache)
 * @param cpu CPU time used, user and system
 * @param cpuUser of which in user mode
 * @param cpuSystem of which in the kernel
 */
public record CgroupStats(
        long memoryBytes, long anonBytes, long fileBytes, Duration cpu, Duration cpuUser, Duration cpuSystem) {}
