package dev.drover.cgroups;

/**
 * What a cgroup is held to. Zero means "not set": nothing is written for it, so a task without resources is
 * unlimited, as a Pod without requests is.
 *
 * @param memoryBytes the hard memory limit, swap off; 0 for none
 * @param cpuMillis the CPU share in thousandths of a core: its weight (v2) or shares (v1), converted as Kubernetes
 *     does; 0 for the default weight
 * @param cpuHardLimit whether {@code cpuMillis} is also a hard quota per {@link #CPU_PERIOD_MICROS}
 * @param pidsMax the most processes and threads; 0 for no limit
 */
public record CgroupLimits(long memoryBytes, long cpuMillis, boolean cpuHardLimit, long pidsMax) {

    /** No limits at all. */
    public static final CgroupLimits NONE = new CgroupLimits(0, 0, false, 0);

    /** The CFS period a hard quota is measured over, as Kubernetes uses: 100 ms. */
    public static final long CPU_PERIOD_MICROS = 100_000;
    /** The smallest quota the kernel takes: 1 ms per period. */
    public static final long MIN_QUOTA_MICROS = 1_000;
    /** The most CPU a limit may name: a thousand cores. */
    public static final long MAX_CPU_MILLIS = 1_000_000;
    /** The kernel's PID_MAX_LIMIT. */
    public static final long MAX_PIDS = 4_194_304;

    static final long MIN_SHARES = 2;
    static final long MAX_SHARES = 262_144;

    public CgroupLimits {
        if (memoryBytes < 0) {
            throw new IllegalArgumentException("memory limit must not be negative, not " + memoryBytes);
        }
        if (cpuMillis < 0 || cpuMillis > MAX_CPU_MILLIS) {
            throw new IllegalArgumentException("CPU must be 0 to " + MAX_CPU_MILLIS + " millicores, not " + cpuMillis);
        }
        if (cpuHardLimit && cpuMillis == 0) {
            throw new IllegalArgumentException("a hard CPU limit needs cpuMillis above 0");
        }
        if (pidsMax < 0 || pidsMax > MAX_PIDS) {
            throw new IllegalArgumentException("pids limit must be 0 to " + MAX_PIDS + ", not " + pidsMax);
        }
    }

    /** v1 cpu.shares for {@code millis}, as Kubernetes' MilliCPUToShares: 1024 per core, 2 at least. */
    public static long cpuShares(long millis) {
        long shares = millis * 1024 / 1000;
        return Math.clamp(shares, MIN_SHARES, MAX_SHARES);
    }

    /** v2 cpu.weight (1 to 10000) for v1 {@code shares}, as Kubernetes' CpuSharesToCpuWeight. */
    public static long cpuWeight(long shares) {
        return 1 + ((Math.clamp(shares, MIN_SHARES, MAX_SHARES) - 2) * 9999) / 262_142;
    }

    /** The quota in microseconds per {@link #CPU_PERIOD_MICROS} for {@code millis}, 1 ms at least. */
    public static long cpuQuotaMicros(long millis) {
        return Math.max(MIN_QUOTA_MICROS, millis * CPU_PERIOD_MICROS / 1000);
    }
}
