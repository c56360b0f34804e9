package dev.drover.node;

import dev.drover.deviceplugin.AttributeValue;
import dev.drover.devices.DeviceManager;
import java.util.Collections;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The {@code drover.dev/} fields the agent wants on its Node: labels, annotations, and the device counts it
 * writes as both capacity and allocatable. Every {@code drover.dev/} key of those four maps is the agent's: one
 * that is not here does not belong on the Node.
 *
 * @param labels      {@code drover.dev/gpu.*}
 * @param annotations how clients reach the agent's API
 * @param capacity    {@code drover.dev/<vendor>-<type>} to its count of healthy instances (allocatable too)
 */
record NodeFields(
        SortedMap<String, String> labels, SortedMap<String, String> annotations, SortedMap<String, String> capacity) {

    static final String PREFIX = "drover.dev/";

    NodeFields {
        labels = Collections.unmodifiableSortedMap(new TreeMap<>(labels));
        annotations = Collections.unmodifiableSortedMap(new TreeMap<>(annotations));
        capacity = Collections.unmodifiableSortedMap(new TreeMap<>(capacity));
    }

    /**
     * @param devices     the node's devices, or null when the agent runs no device plugins (no capacity, no labels)
     * @param annotations how clients reach the agent's API
     */
    static NodeFields of(Map<String, DeviceManager.Device> devices, Map<String, String> annotations) {
        Map<String, String> capacity = new TreeMap<>();
        Map<String, String> labels = new TreeMap<>();
        if (devices != null) {
            Map<String, Integer> healthy = new TreeMap<>();
            TreeSet<String> products = new TreeSet<>();
            TreeSet<String> memories = new TreeSet<>();
            TreeSet<String> drivers = new TreeSet<>();
            int gpus = 0;
            for (DeviceManager.Device d : devices.values()) {
                healthy.merge(resource(d), d.healthy() ? 1 : 0, Integer::sum);
                if (d.group().type().equals("gpu")) {
                    gpus++;
                    products.add(labelValue(d.group().model()));
                    attribute(d.group().attributes(), "memory")
                            .ifPresent(v -> memories.add(labelValue(v.replace(" ", ""))));
                    attribute(d.group().attributes(), "driver_version").ifPresent(v -> drivers.add(labelValue(v)));
                }
            }
            healthy.forEach((resource, count) -> capacity.put(resource, Integer.toString(count)));
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
        return new NodeFields(new TreeMap<>(labels), new TreeMap<>(annotations), new TreeMap<>(capacity));
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
