package dev.drover.controller;

import dev.drover.admission.CpuMemory;
import dev.drover.admission.Decision;
import dev.drover.admission.Device;
import dev.drover.admission.DeviceOffer;
import dev.drover.admission.DevicePicker;
import dev.drover.admission.NodeAdmission;
import dev.drover.admission.NodeBooking;
import dev.drover.admission.NodePorts;
import dev.drover.admission.Requests;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.DesiredStatus;
import dev.drover.api.v1alpha1.DeviceRequest;
import dev.drover.devices.DeviceLedger;
import dev.drover.state.AllocId;
import dev.drover.state.StateDB;
import dev.drover.volumes.HostVolumes;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The controller's side of node admission ({@link NodeAdmission}): new allocations are admitted as they are taken
 * on, CPU, memory and devices together, their device instances reserved in the ledger at once; an update, also one
 * that comes before the allocation started, is admitted again or refused; restored ones are re-admitted before
 * anything new; terminal and destroyed ones free their share and their devices. Deciding and reserving happen under
 * one lock, so no other admission comes between what was offered and what is reserved. An allocation whose volumes
 * name host volumes the agent does not lend its namespace is refused before its requests are looked at. Every change of what is
 * requested is told to {@code changed} (the Node's annotations follow, throttled there).
 */
public final class Admissions {

    private static final Logger LOG = LoggerFactory.getLogger(Admissions.class);
    private static final String NO_PLUGINS =
            " (this agent runs no device plugins; see --device-plugin in docs/configuration.md)";

    private final NodeAdmission node;
    private final DeviceLedger ledger;
    private final Runnable changed;
    private final HostVolumes volumes;
    private final NodePorts ports;
    private final StateDB state;
    private volatile NodeBooking booking = NodeBooking.NONE;

    /**
     * @param ledger  the node's device reservations, or null when the agent runs no device plugins (an allocation
     *                that asks for devices is then refused)
     * @param changed told after each change of what is requested (it must not block)
     */
    public Admissions(NodeAdmission node, DeviceLedger ledger, Runnable changed) {
        this(node, ledger, changed, HostVolumes.NONE);
    }

    /** @param volumes the host volumes this agent lends: an allocation naming another, or one not lent to its
     *                 namespace, is refused ({@link HostVolumes#admit}) */
    public Admissions(NodeAdmission node, DeviceLedger ledger, Runnable changed, HostVolumes volumes) {
        this(node, ledger, changed, volumes, new NodePorts(NodePorts.Range.DEFAULT), null);
    }

    /**
     * @param ports the node's host ports: an allocation's ports are decided with its other requests (a static port
     *              held by another is a {@link NodePorts#PORT_CONFLICT}), and stored in {@code state} once taken
     * @param state where the ports an allocation holds are kept across agent restarts; null: not kept
     */
    public Admissions(
            NodeAdmission node,
            DeviceLedger ledger,
            Runnable changed,
            HostVolumes volumes,
            NodePorts ports,
            StateDB state) {
        this.node = node;
        this.ledger = ledger;
        this.changed = changed;
        this.volumes = volumes;
        this.ports = ports;
        this.state = state;
    }

    /**
     * From now on shares are booked with {@code booking} too (the agent's Pod, {@code nodeSharing: resize}) before an
     * allocation is admitted; set before any is taken on.
     */
    public void bookWith(NodeBooking booking) {
        this.booking = booking;
    }

    /**
     * What taking an allocation on decided.
     *
     * @param again it was admitted before, for an older spec, and has not started: {@code decision} is about its
     *              newer spec, admitted in place of its share or refused while it keeps it, as for an update
     */
    record TakeOn(Decision decision, boolean again) {}

    /**
     * Admits an allocation being taken on and reserves its devices, or tells why it does not fit. One admitted before
     * that has not started yet (a newer spec came while it waited) is admitted again as for an update
     * ({@link #resize}): whether one is and what it asks are read under the same lock.
     */
    TakeOn takeOn(AllocId id, Allocation a) throws InterruptedException {
        if (node.holds(id)) {
            return new TakeOn(resize(id, a), true); // one allocation is taken on by one thread at a time
        }
        Decision d;
        synchronized (this) {
            d = admit(id, a);
        }
        if (!d.admitted()) {
            return new TakeOn(d, false);
        }
        // booked outside the lock: shares that come while one resize is answered are booked together in the next
        Optional<Decision> refused = booking.book(id, CpuMemory.requestsOf(a.getSpec()));
        if (refused.isPresent()) {
            release(id);
            node.refused(refused.get().reason());
            return new TakeOn(explained(refused.get(), Requests.of(a.getSpec())), false);
        }
        return new TakeOn(d, false);
    }

    private Decision admit(AllocId id, Allocation a) {
        Optional<Decision> noVolumes = volumes(id, a);
        if (noVolumes.isPresent()) {
            return noVolumes.get();
        }
        boolean stopped = a.getSpec().effectiveDesiredStatus() == DesiredStatus.Stop;
        NodePorts.Picks picks = ports.pick(id, stopped ? List.of() : a.getSpec().ports());
        if (!picks.admitted()) {
            return new Decision(false, picks.reason(), picks.message(), Map.of());
        }
        Requests asks = Requests.of(a.getSpec());
        DeviceOffer offer = offer(id, asks);
        Decision d = node.admit(id, asks, offer);
        if (!d.admitted()) {
            return explained(d, asks);
        }
        takePorts(id, picks.hostPorts());
        reserve(id, d, offer);
        LOG.debug("allocation {} admitted: {}", id, d.message());
        changed.run();
        return d;
    }

    /**
     * An admitted allocation's spec changed: its new requests are admitted in place of its share (its devices
     * reserved anew, those it keeps first) if they fit, or refused while it runs on as it was. A stopping allocation
     * asks for nothing more, and its tasks keep their devices until they are dead.
     */
    Decision resize(AllocId id, Allocation a) throws InterruptedException {
        if (!node.holds(id)) {
            return resizeHere(id, a); // over: it holds nothing, here or booked, and is not admitted again
        }
        CpuMemory asks = CpuMemory.requestsOf(a.getSpec());
        CpuMemory had = node.share(id);
        CpuMemory most =
                new CpuMemory(Math.max(had.cpuMillis(), asks.cpuMillis()), Math.max(had.memoryMB(), asks.memoryMB()));
        if (!most.equals(had)) { // more than it holds is booked before it is admitted here, as for a new one
            Optional<Decision> refused = booking.book(id, most);
            if (refused.isPresent()) {
                node.refused(refused.get().reason());
                return explained(refused.get(), Requests.of(a.getSpec()));
            }
        }
        Decision d = resizeHere(id, a);
        booking.book(id, d.admitted() ? asks : had); // no more than booked: given back at once
        return d;
    }

    private synchronized Decision resizeHere(AllocId id, Allocation a) {
        Optional<Decision> noVolumes = volumes(id, a);
        if (noVolumes.isPresent()) {
            return noVolumes.get();
        }
        CpuMemory before = node.usage().requested();
        Requests asks = Requests.of(a.getSpec());
        DeviceOffer offer = offer(id, asks);
        Decision d = node.resize(id, asks, offer);
        if (!d.admitted()) {
            return explained(d, asks);
        }
        boolean devicesChanged = a.getSpec().effectiveDesiredStatus() != DesiredStatus.Stop && reserve(id, d, offer);
        if (devicesChanged || !before.equals(node.usage().requested())) {
            changed.run();
        }
        return d;
    }

    /**
     * Allocations restored from the state store that are not over: admitted whatever is free (they ran before the
     * agent restarted), in the order of their ids so that every restart counts them alike. They keep the devices
     * stored for them; a task that has none yet (admitted by an agent that reserved as tasks started) gets free
     * ones if there are.
     *
     * @param storedPorts the host ports the store held for each, as read for the restore (not read again here)
     */
    synchronized void restored(Map<AllocId, Allocation> running, Map<AllocId, Map<String, Integer>> storedPorts) {
        List<AllocId> ids = running.keySet().stream()
                .sorted(Comparator.comparing(AllocId::key))
                .toList();
        for (AllocId id : ids) {
            node.force(id, CpuMemory.requestsOf(running.get(id).getSpec()));
            restorePorts(id, running.get(id), storedPorts.getOrDefault(id, Map.of()));
            if (ledger != null) {
                reserveMissing(id, Requests.of(running.get(id).getSpec()));
            }
        }
        NodeAdmission.Usage u = node.usage();
        if (u.free().cpuMillis() < 0 || u.free().memoryMB() < 0) {
            LOG.warn(
                    "the {} restored allocation(s) request more than the node's allocatable ({} millicores of CPU, {}"
                            + " MB of memory requested of {} and {}); new allocations are refused until they end",
                    ids.size(),
                    u.requested().cpuMillis(),
                    u.requested().memoryMB(),
                    u.allocatable().cpuMillis(),
                    u.allocatable().memoryMB());
        }
        Map<AllocId, CpuMemory> shares = new LinkedHashMap<>();
        ids.forEach(id -> shares.put(id, node.share(id)));
        booking.restore(shares);
        changed.run();
    }

    /** The host ports {@code id} holds, by port name; empty when none. */
    public synchronized Map<String, Integer> hostPorts(AllocId id) {
        return ports.held(id);
    }

    /** The allocation is over (every task dead): its share, its devices and its ports are free. */
    synchronized void release(AllocId id) {
        booking.release(id);
        ports.release(id);
        if (ledger != null) {
            ledger.release(id);
        }
        if (node.release(id)) {
            changed.run();
        }
    }

    /**
     * The allocation is destroyed with its stored state: as {@link #release}, but nothing is written of its devices
     * (it would bring back a row of the allocation just removed).
     */
    synchronized void forget(AllocId id) {
        booking.release(id);
        ports.release(id);
        if (ledger != null) {
            ledger.forget(id);
        }
        if (node.release(id)) {
            changed.run();
        }
    }

    private void takePorts(AllocId id, Map<String, Integer> hostPorts) {
        ports.take(id, hostPorts);
        if (state != null && !hostPorts.isEmpty()) {
            state.putPorts(id, hostPorts);
        }
    }

    /**
     * A restored allocation takes back the ports stored for it; one stored without (an agent before ports were kept)
     * takes them as a new one would, whoever holds them (it ran with them), and a clash is logged.
     */
    private void restorePorts(AllocId id, Allocation a, Map<String, Integer> stored) {
        if (!stored.isEmpty() || a.getSpec().ports().isEmpty()) {
            ports.take(id, stored);
            return;
        }
        NodePorts.Picks picks = ports.pick(id, a.getSpec().ports());
        if (picks.admitted()) {
            takePorts(id, picks.hostPorts());
        } else {
            LOG.warn("restored allocation {} holds no ports and none fit: {}", id, picks.message());
        }
    }

    /** A refusal when the allocation names volumes this agent does not lend it; empty when it may have them. */
    private Optional<Decision> volumes(AllocId id, Allocation a) {
        return volumes.admit(id.namespace(), a.getSpec().getVolumes())
                .map(r -> new Decision(false, r.reason(), r.message(), Map.of()));
    }

    /** What the node offers; one that asks for no devices does not wait for the kubelet's PodResources API. */
    private DeviceOffer offer(AllocId id, Requests asks) {
        return ledger == null
                ? DeviceOffer.NONE
                : ledger.offer(id, !asks.devices().isEmpty());
    }

    /** Reserves the devices {@code d} gives, if they differ from those held; returns whether they did. */
    private boolean reserve(AllocId id, Decision d, DeviceOffer offer) {
        if (ledger == null || d.devices().equals(offer.held())) {
            return false;
        }
        ledger.reserve(id, d.devices());
        return true;
    }

    /** Reserves free instances for the restored allocation's tasks that ask for devices and hold none. */
    private void reserveMissing(AllocId id, Requests asks) {
        DeviceOffer offer = ledger.offer(id);
        Map<String, List<DeviceRequest>> missing = new LinkedHashMap<>(asks.devices());
        missing.keySet().removeAll(offer.held().keySet());
        if (missing.isEmpty()) {
            return;
        }
        DevicePicker.Picks picks = DevicePicker.pick(missing, new DeviceOffer(offer.free(), Map.of()));
        if (!picks.satisfied()) {
            LOG.warn(
                    "restored allocation {}: tasks that ask for devices hold none, and none fit ({}); they fail when"
                            + " they start",
                    id,
                    String.join("; ", picks.shortage()));
            return;
        }
        Map<String, List<Device>> all = new LinkedHashMap<>(offer.held());
        all.putAll(picks.devices());
        ledger.reserve(id, all);
    }

    /** {@code d}, naming why devices cannot fit on an agent that has none. */
    private Decision explained(Decision d, Requests asks) {
        if (ledger != null || asks.devices().isEmpty()) {
            return d;
        }
        return new Decision(false, d.reason(), d.message() + NO_PLUGINS, d.devices());
    }
}
