package dev.drover.admission;

import dev.drover.state.AllocId;
import java.util.Map;
import java.util.Optional;

/**
 * Where the CPU and memory the agent admits are booked with the node's other arbiter, the kubelet
 * ({@code nodeSharing: resize}), so that kube-scheduler and the kubelet count them too; {@link #NONE} books nothing.
 * An allocation's share is booked after it fits the node's own figures and before it is admitted.
 */
public interface NodeBooking {

    /** Books nothing: every share is booked at once. */
    NodeBooking NONE = new NodeBooking() {
        @Override
        public Optional<Decision> book(AllocId id, CpuMemory share) {
            return Optional.empty();
        }

        @Override
        public void release(AllocId id) {}

        @Override
        public void restore(Map<AllocId, CpuMemory> shares) {}
    };

    /**
     * Books {@code share} for {@code id} in place of what it held, waiting for the answer: empty when booked, else a
     * refusal naming what the kubelet said. Giving back (a share no larger than before) is never refused.
     */
    Optional<Decision> book(AllocId id, CpuMemory share) throws InterruptedException;

    /** {@code id}'s share is given back: its allocation is over, or it was not admitted. */
    void release(AllocId id);

    /** Allocations that ran before the agent restarted hold these shares, booked again whatever is answered. */
    void restore(Map<AllocId, CpuMemory> shares);
}
