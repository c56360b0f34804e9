package dev.drover.devices;

import dev.drover.admission.Device;
import dev.drover.admission.DeviceOffer;
import dev.drover.api.v1alpha1.AllocatedDevice;
import dev.drover.state.AllocId;
import dev.drover.state.DeviceReservation;
import dev.drover.state.StateDB;
import dev.drover.state.StateStoreException;
import dev.drover.state.StoredAllocation;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which device instances belong to which allocation's task. Admission decides
 * them ({@link #offer}, then {@link #reserve}); a reservation is for specific
 * instances, is stored (so it survives agent restarts), and is released when
 * its allocation is terminal or destroyed. An instance a Kubernetes Pod holds ({@link HeldByPods}) is never offered;
 * one that turns out to be a Pod's while an allocation holds it is a conflict, logged once.
 */
public final class DeviceLedger {

    private static final Logger LOG = LoggerFactory.getLogger(DeviceLedger.class);

    private final DeviceManager devices;
    private final StateDB state;
    private final Map<AllocId, List<DeviceReservation>> byAlloc = new HashMap<>();
    private final Map<String, AllocId> owner = new HashMap<>();
    private final HeldByPods pods;
    /** The conflicts already logged: instance, allocation and Pod. */
    private final Set<List<String>> conflictsSaid = new HashSet<>();

    public DeviceLedger(DeviceManager devices, StateDB state) {
        this(devices, state, HeldByPods.NONE);
    }

    /** @param pods which instances Kubernetes Pods hold: never offered */
    public DeviceLedger(DeviceManager devices, StateDB state, HeldByPods pods) {
        this.devices = devices;
        this.state = state;
        this.pods = pods;
    }

    /** Which instances Kubernetes Pods hold. */
    public HeldByPods heldByPods() {
        return pods;
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

    /**
     * What the node offers {@code alloc} ({@link DeviceOffer}): the healthy instances no allocation holds, by ID,
     * and those its tasks hold; none a Pod holds, none while who holds them cannot be known. Read and
     * {@link #reserve} under the admission's lock, so no other reservation comes between.
     */
    public DeviceOffer offer(AllocId alloc) {
        return offer(alloc, true);
    }

    /**
     * As {@link #offer(AllocId)}; for an allocation that asks for no devices ({@code asksForDevices} false) what
     * Pods hold is the last answer, without asking the kubelet again (which may take seconds).
     */
    public DeviceOffer offer(AllocId alloc, boolean asksForDevices) {
        // outside this ledger's lock: it may wait for the kubelet
        return offer(alloc, asksForDevices ? pods.fresh() : pods.last());
    }

    private synchronized DeviceOffer offer(AllocId alloc, HeldByPods.View byPods) {
        conflicts(byPods);
        List<Device> free = devices.devices().values().stream()
                .filter(d -> d.healthy() && !owner.containsKey(d.instance().id()))
                .filter(d -> !byPods.withholds(d.instance().id()))
                .map(d -> new Device(
                        d.instance().id(),
                        d.group().vendor(),
                        d.group().type(),
                        d.group().model()))
                .sorted(Comparator.comparing(Device::id))
                .toList();
        Map<String, List<Device>> held = new LinkedHashMap<>();
        for (DeviceReservation r : byAlloc.getOrDefault(alloc, List.of())) {
            List<Device> mine = held.computeIfAbsent(r.task(), k -> new ArrayList<>());
            r.ids().forEach(id -> mine.add(new Device(id, r.vendor(), r.type(), r.model())));
        }
        return new DeviceOffer(free, held);
    }

    /**
     * Reserves for {@code alloc} the instances admission gave each of its tasks ({@code byTask}, out of its
     * {@link #offer}), in place of what it held, and stores that; an instance it held and no task keeps is free.
     */
    public synchronized void reserve(AllocId alloc, Map<String, List<Device>> byTask) {
        for (List<Device> ds : byTask.values()) {
            for (Device d : ds) {
                AllocId holder = owner.get(d.id());
                if (holder != null && !holder.equals(alloc)) {
                    throw new IllegalStateException(
                            "device instance " + d.id() + " is reserved for " + holder + ", not free for " + alloc);
                }
            }
        }
        List<DeviceReservation> had = byAlloc.remove(alloc);
        if (had != null) {
            had.forEach(r -> r.ids().forEach(owner::remove));
        }
        List<DeviceReservation> now = new ArrayList<>();
        byTask.forEach((task, ds) -> {
            // one reservation per device group, so status shows vendor, type and model
            Map<List<String>, List<String>> byGroup = new LinkedHashMap<>();
            for (Device d : ds) {
                byGroup.computeIfAbsent(List.of(d.vendor(), d.type(), d.model()), k -> new ArrayList<>())
                        .add(d.id());
                owner.put(d.id(), alloc);
            }
            byGroup.forEach((g, ids) -> now.add(new DeviceReservation(task, g.get(0), g.get(1), g.get(2), ids)));
        });
        if (!now.isEmpty()) {
            byAlloc.put(alloc, now);
        }
        if (had != null || !now.isEmpty()) {
            store(alloc, List.copyOf(now));
        }
    }

    /**
     * Logs, once each, the instances reserved for an allocation that a Pod holds too: the kubelet gave a Pod what
     * Drover had given (Drover's reservation came first, or the NVIDIA plugin was told no other holder). Both now
     * use it; the task runs on, and the operator decides which to move.
     */
    public synchronized void conflicts(HeldByPods.View byPods) {
        byPods.holders().forEach((id, pod) -> {
            AllocId alloc = owner.get(id);
            if (alloc != null && conflictsSaid.add(List.of(id, alloc.toString(), pod))) {
                if (conflictsSaid.size() > 1024) {
                    conflictsSaid.clear();
                }
                LOG.warn(
                        "device instance {} is reserved for allocation {} and Pod {} holds it too (the kubelet's"
                                + " PodResources API says so): both may use it; the allocation's tasks run on"
                                + " (docs/devices.md, sharing GPUs with the NVIDIA device plugin)",
                        id,
                        alloc,
                        pod);
            }
        });
    }

    /** The instances reserved for the allocation's task when the allocation was admitted; empty if none. */
    public synchronized List<DeviceReservation> reserved(AllocId alloc, String task) {
        return byAlloc.getOrDefault(alloc, List.of()).stream()
                .filter(r -> r.task().equals(task))
                .toList();
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
