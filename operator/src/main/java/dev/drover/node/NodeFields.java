package dev.drover.node;

import dev.drover.deviceplugin.AttributeValue;
import dev.drover.devices.DeviceManager;
import dev.drover.devices.HeldByPods;
import java.util.Collections;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The {@code drover.dev/} fields the agent wants on its Node: labels, annotations, and the device counts it
 * writes as capacity and allocatable. Every {@code drover.dev/} key of those four maps is the agent's: one
 * that is not here does not belong on the Node.
 *
 * @param labels      {@code drover.dev/gpu.*}
 * @param annotations how clients reach the agent's API, and {@link #HELD_BY_PODS}
 * @param capacity    {@code drover.dev/<vendor>-<type>} to its count of healthy instances
 * @param allocatable the same less the healthy instances Kubernetes Pods hold (all of them while who holds them
 *                    cannot be known)
 */
record NodeFields(
        SortedMap<String, String> labels,
        SortedMap<String, String> annotations,
        SortedMap<String, String> capacity,
        SortedMap<String, String> allocatable) {

    static final String PREFIX = "drover.dev/";
    /**
     * The instances Kubernetes Pods hold, by resource: {@code nvidia-gpu=GPU-a,GPU-b} ({@code ;} between
     * resources), or {@code unknown} while the kubelet's PodResources API does not answer; absent when Pods hold
     * none.
     */
    static final String HELD_BY_PODS = PREFIX + "devices-held-by-pods";

    NodeFields {
        labels = Collections.unmodifiableSortedMap(new TreeMap<>(labels));
        annotations = Collections.unmodifiableSortedMap(new TreeMap<>(annotations));
        capacity = Collections.unmodifiableSortedMap(new TreeMap<>(capacity));
        allocatable = Collections.unmodifiableSortedMap(new TreeMap<>(allocatable));
    }

    /** Fields whose allocatable is their capacity: no instance is a Pod's. */
    NodeFields(
            SortedMap<String, String> labels,
            SortedMap<String, String> annotations,
            SortedMap<String, String> capacity) {
        this(labels, annotations, capacity, capacity);
    }

    static NodeFields of(Map<String, DeviceManager.Device> devices, Map<String, String> annotations) {
        return of(devices, HeldByPods.View.NONE, annotations);
    }

    /**
     * @param devices     the node's devices, or null when the agent runs no device plugins (no capacity, no labels)
     * @param byPods      which of them Kubernetes Pods hold
     * @param annotations how clients reach the agent's API
     */
    static NodeFields of(
            Map<String, DeviceManager.Device> devices, HeldByPods.View byPods, Map<String, String> annotations) {
        Map<String, String> capacity = new TreeMap<>();
        Map<String, String> allocatable = new TreeMap<>();
        Map<String, String> labels = new TreeMap<>();
        Map<String, String> notes = new TreeMap<>(annotations);
        if (devices != null) {
            Map<String, Integer> healthy = new TreeMap<>();
            Map<String, Integer> free = new TreeMap<>();
            Map<String, TreeSet<String>> held = new TreeMap<>();
            TreeSet<String> products = new TreeSet<>();
            TreeSet<String> memories = new TreeSet<>();
            TreeSet<String> drivers = new TreeSet<>();
            int gpus = 0;
            for (DeviceManager.Device d : devices.values()) {
                healthy.merge(resource(d), d.healthy() ? 1 : 0, Integer::sum);
                boolean podHolds = byPods.withholds(d.instance().id());
                free.merge(resource(d), d.healthy() && !podHolds ? 1 : 0, Integer::sum);
                if (byPods.holders().containsKey(d.instance().id())) {
                    held.computeIfAbsent(resource(d).substring(PREFIX.length()), k -> new TreeSet<>())
                            .add(d.instance().id());
                }
                if (d.group().type().equals("gpu")) {
                    gpus++;
                    products.add(labelValue(d.group().model()));
                    attribute(d.group().attributes(), "memory")
                            .ifPresent(v -> memories.add(labelValue(v.replace(" ", ""))));
                    attribute(d.group().attributes(), "driver_version").ifPresent(v -> drivers.add(labelValue(v)));
                }
            }
            healthy.forEach((resource, count) -> capacity.put(resource, Integer.toString(count)));
            free.forEach((resource, count) -> allocatable.put(resource, Integer.toString(count)));
            if (!byPods.known()) {
                notes.put(HELD_BY_PODS, "unknown");
            } else if (!held.isEmpty()) {
                StringBuilder v = new StringBuilder();
                held.forEach((resource, ids) -> v.append(v.isEmpty() ? "" : ";")
                        .append(resource)
                        .append('=')
                        .append(String.join(",", ids)));
                notes.put(HELD_BY_PODS, v.toString());
            }
            if (gpus > 0) {
                labels.put(PREFIX + "gpu.product", String.join("_", products));
                labels.put(PREFIX + "gpu.count", Integer.toString(gpus));
                if (!memories.isEmpty()) {
                    labels.put(PREFIX + "gpu.memory", String.join("_", memories));
                }
                if (!drivers.isEmpty()) {
                    labels.put(PREFIX + "gpu.driver", String.join("_", drivers));
                }
            }
        }
        return new NodeFields(
                new TreeMap<>(labels), new TreeMap<>(notes), new TreeMap<>(capacity), new TreeMap<>(allocatable));
    }

    /** The extended resource of a device's group: {@code drover.dev/<vendor>-<type>}. */
    private static String resource(DeviceManager.Device d) {
        return PREFIX
                + (d.group().vendor() + "-" + d.group().type())
                        .toLowerCase(Locale.ROOT)
                        .replaceAll("[^a-z0-9.-]", "-");
    }

    private static Optional<String> attribute(Map<String, AttributeValue> attributes, String name) {
        AttributeValue v = attributes.get(name);
        return v == null ? Optional.empty() : Optional.of(v.display());
    }

    /** A label value: at most 63 of [A-Za-z0-9._-], starting and ending alphanumeric. */
    static String labelValue(String raw) {
        String v = raw.replaceAll("[^A-Za-z0-9._-]+", "-").replaceAll("^[^A-Za-z0-9]+|[^A-Za-z0-9]+$", "");
        return v.length() > 63 ? v.substring(0, 63).replaceAll("[^A-Za-z0-9]+$", "") : v;
    }
}
