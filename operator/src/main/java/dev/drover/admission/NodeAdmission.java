package dev.drover.admission;

import dev.drover.state.AllocId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the node may hand out and what its admitted allocations requested: admits allocations one by one, in the
 * order they are offered, when their requests fit beside the admitted ones, and refuses the others with kubelet's
 * reasons. An allocation that asks for none of a resource always fits it. Admitting is idempotent; an allocation
 * keeps its share until it is released (terminal with every task dead, or destroyed). Pure: no I/O, no clock.
 */
public final class NodeAdmission {

    public static final String ADMITTED = "Admitted";
    public static final String OUT_OF_CPU = "OutOfcpu";
    public static final String OUT_OF_MEMORY = "OutOfmemory";

    /**
     * The node's figures now.
     *
     * @param free allocatable less requested; negative when the admitted ones ask for more (restored ones are never
     *             refused, and an update's requests count as they are)
     */
    public record Usage(CpuMemory allocatable, CpuMemory requested, CpuMemory free, int admitted) {

        /** The figures as the agent's Node annotations ({@code drover.dev/allocatable-cpu-millis} and the rest). */
        public Map<String, String> annotations() {
            Map<String, String> out = new LinkedHashMap<>();
            put(out, "allocatable", allocatable);
            put(out, "requested", requested);
            put(out, "free", free);
            return out;
        }

        private static void put(Map<String, String> out, String what, CpuMemory amount) {
            out.put(ANNOTATION_PREFIX + what + "-cpu-millis", Long.toString(amount.cpuMillis()));
            out.put(ANNOTATION_PREFIX + what + "-memory-mb", Long.toString(amount.memoryMB()));
        }
    }

    static final String ANNOTATION_PREFIX = "drover.dev/";

    private final CpuMemory allocatable;
    private final Map<AllocId, CpuMemory> shares = new HashMap<>();
    private CpuMemory requested = CpuMemory.ZERO;
    private final Map<String, Long> refusals = new TreeMap<>();

    public NodeAdmission(CpuMemory allocatable) {
        if (allocatable.cpuMillis() < 0 || allocatable.memoryMB() < 0) {
            throw new IllegalArgumentException("allocatable amounts cannot be negative: " + allocatable);
        }
        this.allocatable = allocatable;
    }

    /** Admits {@code id} if {@code asks} fits beside the admitted ones; one already admitted stays admitted. */
    public synchronized Decision admit(AllocId id, CpuMemory asks) {
        if (shares.containsKey(id)) {
            return admitted(shares.get(id));
        }
        CpuMemory free = allocatable.minus(requested);
        List<String> shortOf = new ArrayList<>();
        String reason = null;
        if (asks.cpuMillis() > 0 && asks.cpuMillis() > free.cpuMillis()) {
            reason = OUT_OF_CPU;
            shortOf.add(shortage(asks.cpuMillis(), "millicores of CPU", free.cpuMillis(), allocatable.cpuMillis()));
        }
        if (asks.memoryMB() > 0 && asks.memoryMB() > free.memoryMB()) {
            reason = reason == null ? OUT_OF_MEMORY : reason;
            shortOf.add(shortage(asks.memoryMB(), "MB of memory", free.memoryMB(), allocatable.memoryMB()));
        }
        if (reason != null) {
            refusals.merge(reason, 1L, Long::sum);
            return new Decision(false, reason, "The node cannot fit this allocation: " + String.join("; ", shortOf));
        }
        take(id, asks);
        return admitted(asks);
    }

    /** Admits {@code id} whatever is free: one that ran before the agent restarted is never refused. */
    public synchronized void force(AllocId id, CpuMemory asks) {
        release(id);
        take(id, asks);
    }

    /**
     * An admitted allocation's spec changed: its new requests count from now on (not refused; see {@link Usage}).
     * Returns whether its share changed.
     */
    public synchronized boolean resize(AllocId id, CpuMemory asks) {
        CpuMemory had = shares.get(id);
        if (had == null || had.equals(asks)) {
            return false;
        }
        force(id, asks);
        return true;
    }

    /** Frees {@code id}'s share; returns whether it held one. */
    public synchronized boolean release(AllocId id) {
        CpuMemory had = shares.remove(id);
        if (had == null) {
            return false;
        }
        requested = requested.minus(had);
        return true;
    }

    public synchronized boolean holds(AllocId id) {
        return shares.containsKey(id);
    }

    public synchronized Usage usage() {
        return new Usage(allocatable, requested, allocatable.minus(requested), shares.size());
    }

    /** Allocations refused so far, by reason. */
    public synchronized Map<String, Long> refusals() {
        return Map.copyOf(refusals);
    }

    private void take(AllocId id, CpuMemory asks) {
        shares.put(id, asks);
        requested = requested.plus(asks);
    }

    private static Decision admitted(CpuMemory asks) {
        return new Decision(
                true,
                ADMITTED,
                "The node had room for this allocation's requests: " + asks.cpuMillis() + " millicores of CPU, "
                        + asks.memoryMB() + " MB of memory");
    }

    private static String shortage(long asked, String what, long free, long allocatable) {
        return "requested " + asked + " " + what + ", " + Math.max(0, free) + " free of " + allocatable
                + " allocatable";
    }
}
