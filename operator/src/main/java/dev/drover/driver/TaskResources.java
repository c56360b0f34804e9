package dev.drover.driver;

/**
 * What a task asked of the node ({@code resources} of its spec), for drivers that confine it. Zero means not
 * set: a task without resources is best-effort and unlimited.
 *
 * @param cpuMillis    its CPU share in thousandths of a core
 * @param memoryMB     its hard memory limit in MiB
 * @param cpuHardLimit whether {@code cpuMillis} is also a hard quota
 */
public record TaskResources(long cpuMillis, long memoryMB, boolean cpuHardLimit) {

    /** Nothing asked for. */
    public static final TaskResources NONE = new TaskResources(0, 0, false);
}
