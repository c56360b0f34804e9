package dev.drover.driver;

import java.time.Duration;
import java.time.Instant;

/**
 * A task's resource usage at one moment.
 *
 * @param memoryBytes memory its processes use: what its cgroup is charged (page cache included), or their resident
 *     memory where it has no cgroup
 * @param workingSetBytes memory it cannot give back at once: its cgroup's usage less the inactive page cache, as
 *     cAdvisor counts it; the resident memory where it has no cgroup
 * @param memoryLimitBytes the memory limit its cgroup holds; 0 when it has none
 */
public record TaskStats(Instant at, Duration cpuTime, long memoryBytes, long workingSetBytes, long memoryLimitBytes) {

    /** Usage without a cgroup: the working set is {@code memoryBytes}, and there is no limit. */
    public TaskStats(Instant at, Duration cpuTime, long memoryBytes) {
        this(at, cpuTime, memoryBytes, memoryBytes, 0);
    }
}
