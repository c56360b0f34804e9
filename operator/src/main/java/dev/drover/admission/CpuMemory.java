package dev.drover.admission;

import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.DesiredStatus;
import dev.drover.api.v1alpha1.Resources;
import dev.drover.api.v1alpha1.Task;

/**
 * An amount of the node's CPU and memory: what an allocation requests, what the node may hand out, what is free.
 *
 * @param cpuMillis thousandths of a core
 * @param memoryMB  megabytes (2^20 bytes)
 */
public record CpuMemory(long cpuMillis, long memoryMB) {

    public static final CpuMemory ZERO = new CpuMemory(0, 0);

    public CpuMemory plus(CpuMemory o) {
        return new CpuMemory(cpuMillis + o.cpuMillis, memoryMB + o.memoryMB);
    }

    public CpuMemory minus(CpuMemory o) {
        return new CpuMemory(cpuMillis - o.cpuMillis, memoryMB - o.memoryMB);
    }

    /**
     * What an allocation requests: the sum of its tasks' {@code resources.cpuMillis} and {@code memoryMB} (a task
     * without them asks for nothing, as a Pod without requests). Lifecycle tasks count as well, though they run only
     * for a while. One created with {@code desiredStatus: Stop} runs nothing and asks for nothing.
     */
    public static CpuMemory requestsOf(AllocationSpec spec) {
        if (spec == null || spec.getTasks() == null || spec.effectiveDesiredStatus() == DesiredStatus.Stop) {
            return ZERO;
        }
        long cpu = 0;
        long memory = 0;
        for (Task t : spec.getTasks()) {
            Resources r = t == null ? null : t.getResources();
            if (r != null) {
                cpu += r.getCpuMillis() == null ? 0 : Math.max(0, r.getCpuMillis());
                memory += r.getMemoryMB() == null ? 0 : Math.max(0, r.getMemoryMB());
            }
        }
        return new CpuMemory(cpu, memory);
    }
}
