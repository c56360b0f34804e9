package dev.drover.podresources;

import java.util.List;
import java.util.Objects;

/**
 * Devices of one resource the kubelet gave one container of a Pod, as its PodResources API lists them.
 *
 * @param resource  the extended resource, such as {@code nvidia.com/gpu}
 * @param deviceIds the IDs its device plugin gave them: for the NVIDIA plugin a GPU's UUID ({@code GPU-...}),
 *                  a MIG device's ({@code MIG-...}) or, with {@code DEVICE_ID_STRATEGY=index}, a GPU's index
 */
public record PodDevices(String namespace, String pod, String container, String resource, List<String> deviceIds) {

    public PodDevices {
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(pod, "pod");
        Objects.requireNonNull(container, "container");
        Objects.requireNonNull(resource, "resource");
        deviceIds = List.copyOf(deviceIds);
    }

    /** {@code namespace/pod}, as {@code kubectl} names it. */
    public String podName() {
        return namespace + "/" + pod;
    }
}
