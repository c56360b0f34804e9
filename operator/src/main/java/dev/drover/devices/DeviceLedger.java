package dev.drover.devices;

import dev.drover.api.v1alpha1.AllocatedDevice;
import dev.drover.api.v1alpha1.DeviceRequest;
import dev.drover.state.AllocId;
import dev.drover.state.DeviceReservation;
import dev.drover.state.StateDB;
import dev.drover.state.StateStoreException;
import dev.drover.state.StoredAllocation;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which device instances belong to which allocation's task. A reservation is
 * for specific instances, is stored (so it survives agent restarts), and is
 * released when its allocation is terminal or destroyed.
 */
public final class DeviceLedger {

    private static final Logger LOG = LoggerFactory.getLogger(DeviceLedger.class);

    /** Not enough healthy free instances; the message names the device, the count asked and free. */
    public static final class Unsatisfiable extends Exception {
        Unsatisfiable(String message) {
            super(message);
        }
    }

    private final DeviceManager devices;
    private final StateDB state;
    private final Map<AllocId, List<DeviceReservation>> byAlloc = new HashMap<>();
    private final Map<String, AllocId> owner = new HashMap<>();

    public DeviceLedger(DeviceManager devices, StateDB state) {
        this.devices = devices;
        this.state = state;
    }

    /** Takes back the reservations stored before an agent restart. */
    public synchronized void restore(List<StoredAllocation> stored) {
        for (StoredAllocation s : stored) {
            if (!s.devices().isEmpty()) {
                byAlloc.put(s.id(), new ArrayList<>(s.devices()));
                s.devices().forEach(r -> r.ids().forEach(id -> owner.put(id, s.id())));
            }
        }
    }

    /** The task's reservation: the stored one if it has one, else healthy free instances claimed now. */
    public synchronized List<DeviceReservation> claim(AllocId alloc, String task, List<DeviceRequest> requests)
            throws Unsatisfiable {
        List<DeviceReservation> mine = byAlloc.getOrDefault(alloc, List.of()).stream()
                .filter(r -> r.task().equals(task))
                .toList();
        if (!mine.isEmpty()) {
            return mine;
        }
        List<DeviceReservation> claimed = new ArrayList<>();
        List<String> taken = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        for (DeviceRequest request : requests) {
            int count = request.effectiveCount();
            List<DeviceManager.Device> free = devices.healthyMatching(request.getName()).stream()
                    .filter(d -> !owner.containsKey(d.instance().id())
                            && !taken.contains(d.instance().id()))
                    .toList();
            if (free.size() < count) {
                problems.add("device " + request.getName() + ": asked " + count + ", " + free.size() + " free");
                continue;
            }
            // one reservation per device group, so status shows vendor, type and model
            Map<String, List<DeviceManager.Device>> byGroup = new LinkedHashMap<>();
            for (DeviceManager.Device d : free.subList(0, count)) {
                byGroup.computeIfAbsent(d.group().id(), k -> new ArrayList<>()).add(d);
                taken.add(d.instance().id());
            }
            for (List<DeviceManager.Device> group : byGroup.values()) {
                var g = group.getFirst().group();
                claimed.add(new DeviceReservation(
                        task,
                        g.vendor(),
                        g.type(),
                        g.model(),
                        group.stream().map(d -> d.instance().id()).toList()));
            }
        }
        if (!problems.isEmpty()) {
            throw new Unsatisfiable(String.join("; ", problems));
        }
        List<DeviceReservation> all = byAlloc.computeIfAbsent(alloc, k -> new ArrayList<>());
        all.addAll(claimed);
        taken.forEach(id -> owner.put(id, alloc));
        store(alloc, List.copyOf(all));
        return claimed;
    }

    /** Frees the allocation's instances (it is terminal, or gone). */
    public synchronized void release(AllocId alloc) {
        List<DeviceReservation> gone = byAlloc.remove(alloc);
        if (gone != null) {
            gone.forEach(r -> r.ids().forEach(owner::remove));
            store(alloc, List.of());
        }
    }

    /**
     * The ledger in memory is what counts while the agent runs; a write the store fails (a full disk) is kept
     * and written again by the store, so neither a claim nor a release fails for it.
     */
    private void store(AllocId alloc, List<DeviceReservation> reservations) {
        try {
            state.putDeviceReservations(alloc, reservations);
        } catch (StateStoreException e) {
            LOG.debug("device reservations of {} wait to be stored: {}", alloc, e.getMessage());
        }
    }

    /**
     * Frees the instances of an allocation that was destroyed with its stored state: as {@link #release}, but
     * nothing is written (it would bring back a row of the allocation just removed).
     */
    public synchronized void forget(AllocId alloc) {
        List<DeviceReservation> gone = byAlloc.remove(alloc);
        if (gone != null) {
            gone.forEach(r -> r.ids().forEach(owner::remove));
        }
    }

    /** The allocation's reservations, one per task and device group. */
    public synchronized List<DeviceReservation> reservations(AllocId alloc) {
        return List.copyOf(byAlloc.getOrDefault(alloc, List.of()));
    }

    /** Who holds an instance: its allocation and task. */
    public record Holder(AllocId alloc, String task) {}

    /** Every reserved instance, by ID. */
    public synchronized Map<String, Holder> holders() {
        Map<String, Holder> out = new HashMap<>();
        byAlloc.forEach((alloc, rs) ->
                rs.forEach(r -> r.ids().forEach(id -> out.put(id, new Holder(alloc, r.task())))));
        return out;
    }

    /** The allocation's devices, as its status reports them. */
    public synchronized Optional<List<AllocatedDevice>> allocated(AllocId alloc) {
        List<DeviceReservation> rs = byAlloc.get(alloc);
        if (rs == null || rs.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(rs.stream()
                .map(r -> new AllocatedDevice(r.task(), r.vendor(), r.type(), r.model(), r.ids()))
                .toList());
    }
}
