package dev.drover.controller;

import dev.drover.admission.CpuMemory;
import dev.drover.admission.Decision;
import dev.drover.admission.NodeAdmission;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.state.AllocId;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The controller's side of node admission ({@link NodeAdmission}): new allocations are admitted as they are taken
 * on, restored ones re-admitted before anything new, terminal and destroyed ones free their share; every change is
 * told to {@code changed} (the Node's annotations follow, throttled there).
 */
public final class Admissions {

    private static final Logger LOG = LoggerFactory.getLogger(Admissions.class);

    private final NodeAdmission node;
    private final Runnable changed;

    /** @param changed told after each change of what is requested (it must not block) */
    public Admissions(NodeAdmission node, Runnable changed) {
        this.node = node;
        this.changed = changed;
    }

    /** Admits a new allocation, or tells why it does not fit. */
    Decision admit(AllocId id, Allocation a) {
        boolean held = node.holds(id);
        Decision d = node.admit(id, CpuMemory.requestsOf(a.getSpec()));
        if (d.admitted() && !held) {
            LOG.debug("allocation {} admitted: {}", id, d.message());
            changed.run();
        }
        return d;
    }

    /**
     * Allocations restored from the state store that are not over: admitted whatever is free (they ran before the
     * agent restarted), in the order of their ids so that every restart counts them alike.
     */
    void restored(Map<AllocId, Allocation> running) {
        List<AllocId> ids = running.keySet().stream()
                .sorted(Comparator.comparing(AllocId::key))
                .toList();
        for (AllocId id : ids) {
            node.force(id, CpuMemory.requestsOf(running.get(id).getSpec()));
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
        changed.run();
    }

    /** An admitted allocation's spec changed: its requests count as they are now. */
    void resize(AllocId id, Allocation a) {
        if (node.resize(id, CpuMemory.requestsOf(a.getSpec()))) {
            changed.run();
        }
    }

    /** The allocation is over (every task dead) or destroyed: its share is free. */
    void release(AllocId id) {
        if (node.release(id)) {
            changed.run();
        }
    }
}
