package dev.drover.sharing;

import java.util.Locale;

/**
 * How the agent keeps its allocations and the kubelet's Pods from booking the same CPU and memory
 * (docs/install.md, "Sharing a node with Pods").
 */
public enum NodeSharing {
    /**
     * The agent books what it admits on its own Pod: its {@code reservation} container's requests are resized in
     * place to the sum admitted, so kube-scheduler sees it, and an allocation is admitted only once the kubelet has
     * accepted the resize (Kubernetes 1.35, where in-place resize is stable).
     */
    RESIZE,
    /**
     * Drover's allocatable is the Node's allocatable less the requests of the Pods bound to the node, read with a
     * field selector on {@code spec.nodeName}; meant for nodes tainted for Drover, where only DaemonSets run.
     */
    DEDICATED;

    /** The first Kubernetes minor version where in-place Pod resize is stable and on. */
    public static final int RESIZE_SINCE_MINOR = 35;

    /** {@code resize} or {@code dedicated}; anything else is an IllegalArgumentException saying what may be. */
    public static NodeSharing parse(String text) {
        return switch (text.strip().toLowerCase(Locale.ROOT)) {
            case "resize" -> RESIZE;
            case "dedicated" -> DEDICATED;
            default -> throw new IllegalArgumentException("not one of resize, dedicated");
        };
    }

    /**
     * What an agent that was not told uses: {@code resize} where it knows its Pod and the API server resizes Pods in
     * place by default (1.35 and later), else {@code dedicated}.
     *
     * @param serverMinor the API server's minor version, or -1 when unknown
     */
    public static NodeSharing chosen(boolean inPod, int serverMinor) {
        return inPod && serverMinor >= RESIZE_SINCE_MINOR ? RESIZE : DEDICATED;
    }

    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }
}
