package dev.drover.gc;

import java.time.Duration;

/**
 * When terminal allocations are collected (docs/semantics.md, Garbage collection):
 * every {@code interval} and whenever one becomes terminal, the oldest terminal
 * allocations go while disk usage is over {@code maxDiskUsage}, inode usage
 * over {@code maxInodeUsage}, or there are more than {@code maxAllocations};
 * at most {@code parallelDestroys} at once.
 */
public record GcPolicy(
        Duration interval, double maxDiskUsage, double maxInodeUsage, int maxAllocations, int parallelDestroys) {

    public static final GcPolicy DEFAULT = new GcPolicy(Duration.ofMinutes(1), 0.80, 0.70, 50, 2);

    public GcPolicy {
        if (maxDiskUsage <= 0 || maxDiskUsage > 1 || maxInodeUsage <= 0 || maxInodeUsage > 1) {
            throw new IllegalArgumentException("gc usage thresholds are fractions in (0, 1], got disk " + maxDiskUsage
                    + " and inodes " + maxInodeUsage);
        }
        if (maxAllocations < 0 || parallelDestroys < 1 || interval.isNegative() || interval.isZero()) {
            throw new IllegalArgumentException(
                    "gc needs maxAllocations >= 0, parallelDestroys >= 1 and a positive interval");
        }
    }
}
