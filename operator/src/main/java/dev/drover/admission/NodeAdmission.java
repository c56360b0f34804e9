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
 * order they are offered, when their CPU, memory and devices fit beside the admitted ones, and refuses the others
 * with kubelet's reasons. An allocation that asks for none of a resource always fits it. Devices are decided from an
 * offer of instances ({@link DeviceOffer}) whose holders the caller keeps; CPU and memory shares are kept here.
 * Admitting is idempotent; an allocation keeps its share until it is released (terminal with every task dead, or
 * destroyed). Pure: no I/O, no clock.
 */
public final class NodeAdmission {

    public static final String ADMITTED = "Admitted";
    public static final String OUT_OF_CPU = "OutOfcpu";
    public static final String OUT_OF_MEMORY = "OutOfmemory";
    public static final String OUT_OF_DEVICES = "OutOfdevices";
    /** The kubelet's answer to booking an allocation ({@link NodeBooking}) did not come, or the booking failed. */
    public static final String RESIZE_FAILED = "ResizeFailed";

    /**
     * The node's figures now.
     *
     * @param free allocatable less requested; negative when the admitted ones ask for more (restored ones are never
     *             refused)
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

    private CpuMemory allocatable;
    private final Map<AllocId, CpuMemory> shares = new HashMap<>();
    private CpuMemory requested = CpuMemory.ZERO;
    private final Map<String, Long> refusals = new TreeMap<>();

    public NodeAdmission(CpuMemory allocatable) {
        this.allocatable = checked(allocatable);
    }

    /**
     * What the node may hand out changed (the Pods bound to it took or gave back some): later decisions count with
     * {@code now}. Admitted allocations keep their shares, also where they ask more than is left then.
     */
    public synchronized void allocatable(CpuMemory now) {
        allocatable = checked(now);
    }

    private static CpuMemory checked(CpuMemory allocatable) {
        if (allocatable.cpuMillis() < 0 || allocatable.memoryMB() < 0) {
            throw new IllegalArgumentException("allocatable amounts cannot be negative: " + allocatable);
        }
        return allocatable;
    }

    /**
     * Admits {@code id} if its CPU, memory and devices fit beside the admitted ones, all three or none: the decision
     * names the instances its tasks get out of {@code offer}. One already admitted stays admitted, with the instances
     * it holds.
     */
    public synchronized Decision admit(AllocId id, Requests asks, DeviceOffer offer) {
        if (shares.containsKey(id)) {
            return admitted(shares.get(id), offer.held());
        }
        return decide(id, asks, offer, CpuMemory.ZERO, "The node cannot fit this allocation: ");
    }

    /** Admits {@code id} whatever is free: one that ran before the agent restarted is never refused. */
    public synchronized void force(AllocId id, CpuMemory asks) {
        release(id);
        take(id, asks);
    }

    /**
     * An admitted allocation's spec changed: admits its new requests in place of its share if they fit beside the
     * others (what it asks beyond its share must be free, what it gives back always fits), else refuses them and it
     * keeps its share. Its tasks keep the instances they hold where their requests still name them. One that holds no
     * share (it is over) is not admitted again: the decision admits it as it is.
     */
    public synchronized Decision resize(AllocId id, Requests asks, DeviceOffer offer) {
        CpuMemory had = shares.get(id);
        if (had == null) {
            return admitted(CpuMemory.ZERO, offer.held());
        }
        return decide(
                id,
                asks,
                offer,
                had,
                "The node cannot fit the allocation's new requests, so it runs on as it" + " was: ");
    }

    /**
     * Admits {@code id} with {@code asks} in place of {@code had} (zero for a new one) when each amount fits: it asks
     * no more than it had, or no more than is free with {@code had} given back.
     */
    private Decision decide(AllocId id, Requests asks, DeviceOffer offer, CpuMemory had, String refusal) {
        CpuMemory free = allocatable.minus(requested).plus(had);
        CpuMemory cpuMemory = asks.cpuMemory();
        List<String> shortOf = new ArrayList<>();
        String reason = null;
        if (cpuMemory.cpuMillis() > had.cpuMillis() && cpuMemory.cpuMillis() > free.cpuMillis()) {
            reason = OUT_OF_CPU;
            shortOf.add(
                    shortage(cpuMemory.cpuMillis(), "millicores of CPU", free.cpuMillis(), allocatable.cpuMillis()));
        }
        if (cpuMemory.memoryMB() > had.memoryMB() && cpuMemory.memoryMB() > free.memoryMB()) {
            reason = reason == null ? OUT_OF_MEMORY : reason;
            shortOf.add(shortage(cpuMemory.memoryMB(), "MB of memory", free.memoryMB(), allocatable.memoryMB()));
        }
        DevicePicker.Picks picks = DevicePicker.pick(asks.devices(), offer);
        if (!picks.shortage().isEmpty()) {
            reason = reason == null ? OUT_OF_DEVICES : reason;
            shortOf.addAll(picks.shortage());
        }
        if (reason != null) {
            refusals.merge(reason, 1L, Long::sum);
            return new Decision(false, reason, refusal + String.join("; ", shortOf), Map.of());
        }
        release(id);
        take(id, cpuMemory);
        return admitted(cpuMemory, picks.devices());
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

    /** What {@code id} holds of the node's CPU and memory; zero when it holds no share. */
    public synchronized CpuMemory share(AllocId id) {
        return shares.getOrDefault(id, CpuMemory.ZERO);
    }

    public synchronized boolean holds(AllocId id) {
        return shares.containsKey(id);
    }

    public synchronized Usage usage() {
        return new Usage(allocatable, requested, allocatable.minus(requested), shares.size());
    }

    /** An allocation that fit here was refused by the node's other arbiter ({@link NodeBooking}), for {@code reason}. */
    public synchronized void refused(String reason) {
        refusals.merge(reason, 1L, Long::sum);
    }

    /** Allocations refused so far, by reason. */
    public synchronized Map<String, Long> refusals() {
        return Map.copyOf(refusals);
    }

    private void take(AllocId id, CpuMemory asks) {
        shares.put(id, asks);
        requested = requested.plus(asks);
    }

    private static Decision admitted(CpuMemory asks, Map<String, List<Device>> devices) {
        int count = devices.values().stream().mapToInt(List::size).sum();
        return new Decision(
                true,
                ADMITTED,
                "The node had room for this allocation's requests: " + asks.cpuMillis() + " millicores of CPU, "
                        + asks.memoryMB() + " MB of memory" + (count == 0 ? "" : ", " + count + " device(s)"),
                devices);
    }

    private static String shortage(long asked, String what, long free, long allocatable) {
        return "requested " + asked + " " + what + ", " + Math.max(0, free) + " free of " + allocatable
                + " allocatable";
    }
}
