package dev.drover.devices;

import java.util.Map;
import java.util.function.Consumer;

/**
 * Which of the node's device instances Kubernetes Pods hold (the kubelet's PodResources API says so, where another
 * device plugin, NVIDIA's, gives the same GPUs to Pods): none of them may be reserved for an allocation.
 */
public interface HeldByPods {

    /**
     * What is known of the Pods' devices.
     *
     * @param known   false when their holders cannot be known (the kubelet's socket is there but does not answer):
     *                then every instance is withheld, since any may be a Pod's
     * @param holders the instances Pods hold, by instance ID, each to its Pod ({@code namespace/name})
     * @param why     why they are not known; empty when they are
     */
    record View(boolean known, Map<String, String> holders, String why) {
        /** Pods hold nothing (or no kubelet PodResources API is there to say otherwise). */
        public static final View NONE = new View(true, Map.of(), "");

        public View {
            holders = Map.copyOf(holders);
        }

        public static View held(Map<String, String> holders) {
            return new View(true, holders, "");
        }

        public static View unknown(String why) {
            return new View(false, Map.of(), why);
        }

        /** Whether the instance must not be reserved: a Pod holds it, or who does cannot be known. */
        public boolean withholds(String instanceId) {
            return !known || holders.containsKey(instanceId);
        }
    }

    /** Nothing is shared with Pods. */
    HeldByPods NONE = new HeldByPods() {
        @Override
        public View fresh() {
            return View.NONE;
        }

        @Override
        public View last() {
            return View.NONE;
        }
    };

    /** What Pods hold now: asked again when the last answer is older than a bound (this may block, bounded). */
    View fresh();

    /** The last view, without asking. */
    View last();

    /** {@code changed} is told each new view (it must not block). */
    default void onChange(Consumer<View> changed) {}
}
