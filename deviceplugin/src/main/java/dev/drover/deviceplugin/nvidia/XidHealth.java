package dev.drover.deviceplugin.nvidia;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * GPU health from NVML error events, as a pure decision object: a critical event makes a GPU unhealthy; a
 * GPU with no critical event for the quiet period is healthy again (the Kubernetes device plugin never
 * lets a GPU recover short of a restart, which strands GPUs after one transient fault). XIDs caused by an
 * application (a bad kernel, a killed context) say nothing about the GPU and are ignored.
 */
final class XidHealth {

    /** XIDs an application causes: 13 graphics engine exception, 31 MMU fault, 43 stopped channel,
     *  45 preemptive cleanup, 68 video processor exception, 109 context switch timeout. */
    static final Set<Integer> APPLICATION_XIDS = Set.of(13, 31, 43, 45, 68, 109);

    /** What made a GPU unhealthy and when it last happened. */
    private record Fault(String what, Instant last) {}

    /** Health at a moment: healthy, or why not. */
    record Health(boolean healthy, String description) {
        static final Health OK = new Health(true, "");
    }

    private final Set<Integer> applicationXids;
    private final Duration quietPeriod;
    private final Map<String, Fault> faults = new HashMap<>();

    XidHealth(Set<Integer> applicationXids, Duration quietPeriod) {
        this.applicationXids = Set.copyOf(applicationXids);
        this.quietPeriod = quietPeriod;
    }

    /** Whether an XID counts against the GPU. */
    boolean critical(long xid) {
        return xid > Integer.MAX_VALUE || !applicationXids.contains((int) xid);
    }

    /** Records a critical XID; returns false (and records nothing) for an application XID. */
    synchronized boolean recordXid(String uuid, long xid, Instant at) {
        if (!critical(xid)) {
            return false;
        }
        record(uuid, xid == 999 ? "XID 999 (unknown error)" : "XID " + xid, at);
        return true;
    }

    synchronized void recordDoubleBitEcc(String uuid, Instant at) {
        record(uuid, "double-bit ECC error", at);
    }

    synchronized Health healthAt(String uuid, Instant now) {
        Fault f = faults.get(uuid);
        if (f == null || !now.isBefore(f.last.plus(quietPeriod))) {
            return Health.OK;
        }
        return new Health(
                false, f.what + " at " + f.last + "; healthy again after " + quietPeriod + " without critical errors");
    }

    /** The earliest moment after {@code now} at which some GPU becomes healthy again. */
    synchronized Optional<Instant> nextRecovery(Instant now) {
        return faults.values().stream()
                .map(f -> f.last.plus(quietPeriod))
                .filter(now::isBefore)
                .min(Instant::compareTo);
    }

    private void record(String uuid, String what, Instant at) {
        Fault previous = faults.get(uuid);
        if (previous == null || !at.isBefore(previous.last)) {
            faults.put(uuid, new Fault(what, at));
        }
    }
}
