package dev.drover.admission;

import io.fabric8.kubernetes.api.model.Quantity;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the node has, and what the agent may hand out of it: unless configured, allocatable is the node's cores
 * (×1000) and memory less a reserve for the system and the agent (kubelet's {@code system-reserved}).
 */
public final class NodeCapacity {

    /** The reserve when none is configured: what the agent and the node's daemons need. */
    public static final CpuMemory DEFAULT_RESERVED = new CpuMemory(100, 256);

    private static final Pattern MEM_TOTAL = Pattern.compile("(?m)^MemTotal:\\s+(\\d{1,15})\\s*kB\\s*$");

    private NodeCapacity() {}

    /**
     * The node's cores as the JVM sees them (a CPU limit on the agent's container lowers them) and its memory from
     * {@code /proc/meminfo} (the host's, also in a container).
     */
    public static CpuMemory detect() {
        long cpu = Runtime.getRuntime().availableProcessors() * 1000L;
        long memory;
        try {
            memory = memTotalMB(Files.readString(Path.of("/proc/meminfo"))).orElse(0L);
        } catch (IOException | RuntimeException e) {
            memory = 0;
        }
        if (memory == 0) {
            memory = Runtime.getRuntime().maxMemory() >> 20; // no /proc: at least something that is there
        }
        return new CpuMemory(cpu, memory);
    }

    /** {@code MemTotal} of a {@code /proc/meminfo} text, in MB; empty when it has none. */
    static Optional<Long> memTotalMB(String meminfo) {
        Matcher m = MEM_TOTAL.matcher(meminfo);
        return m.find() ? Optional.of(Long.parseLong(m.group(1)) / 1024) : Optional.empty();
    }

    /**
     * Allocatable: each amount configured, else the node's less the reserve (never below 0).
     *
     * @param cpuMillis configured CPU, if any
     * @param memoryMB  configured memory, if any
     */
    public static CpuMemory allocatable(
            Optional<Long> cpuMillis, Optional<Long> memoryMB, CpuMemory reserved, CpuMemory node) {
        return new CpuMemory(
                cpuMillis.orElse(Math.max(0, node.cpuMillis() - reserved.cpuMillis())),
                memoryMB.orElse(Math.max(0, node.memoryMB() - reserved.memoryMB())));
    }

    /**
     * A Node's {@code status.allocatable} as the node's units: CPU in millicores, memory in whole MB (rounded down:
     * a part of one is not there to hand out). Empty when it names no cpu or no memory (no kubelet reports it).
     *
     * @throws IllegalArgumentException when either is no quantity
     */
    public static Optional<CpuMemory> ofNode(Map<String, Quantity> allocatable) {
        Quantity cpu = allocatable == null ? null : allocatable.get("cpu");
        Quantity memory = allocatable == null ? null : allocatable.get("memory");
        if (cpu == null || memory == null) {
            return Optional.empty();
        }
        return Optional.of(new CpuMemory(
                KubeQuantity.millis(KubeQuantity.parse(text(cpu))),
                KubeQuantity.parse(text(memory)).toBigInteger().shiftRight(20).longValueExact()));
    }

    private static String text(Quantity q) {
        return q.getAmount() == null ? null : q.getAmount() + (q.getFormat() == null ? "" : q.getFormat());
    }
}
