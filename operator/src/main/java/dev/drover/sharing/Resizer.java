package dev.drover.sharing;

import dev.drover.admission.CpuMemory;
import java.time.Duration;

/** Resizes the agent's reservation and waits for the kubelet's answer ({@link PodResize} on the agent's Pod). */
public interface Resizer {

    String DEFERRED = "Deferred";
    String INFEASIBLE = "Infeasible";
    /** The reason of a refusal when the resize itself failed (not the kubelet's answer). */
    String RESIZE_FAILED = dev.drover.admission.NodeAdmission.RESIZE_FAILED;

    /**
     * How resizes are answered and tried again.
     *
     * @param firstPoll    the first wait before the Pod is read again after a resize, doubled up to {@code maxPoll}
     * @param answerWithin how long the kubelet has to answer a resize before it counts as failed
     * @param retry        how long after a failed resize that booked no new share it is tried again
     */
    record Timing(Duration firstPoll, Duration maxPoll, Duration answerWithin, Duration retry) {

        public static final Timing DEFAULT = new Timing(
                Duration.ofMillis(50), Duration.ofMillis(500), Duration.ofMinutes(1), Duration.ofSeconds(30));
    }

    /** The kubelet's answer to one resize. */
    record Answer(boolean accepted, String reason, String message) {

        public static final Answer ACCEPTED = new Answer(true, "", "");

        /** A refusal by the kubelet ({@code Deferred} or {@code Infeasible}), not a failure of the resize. */
        public boolean refusedByKubelet() {
            return DEFERRED.equals(reason) || INFEASIBLE.equals(reason);
        }
    }

    /** {@code namespace/name} of the Pod, for messages. */
    String name();

    /** What the kubelet had allocated to the reservation when it was found. */
    CpuMemory allocated();

    /** Resizes the reservation to {@code target} and waits for the kubelet's answer. */
    Answer resize(CpuMemory target) throws InterruptedException;
}
