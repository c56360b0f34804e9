package dev.drover.deviceplugin;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Interchangeable devices: same vendor, type, model and attributes. Tasks ask for {@code vendor/type} or
 * {@code vendor/type/model} and get instances of a group.
 *
 * @param attributes typed values with units (memory in MiB, clocks in MHz, ...), sorted by name
 */
public record DeviceGroup(
        String vendor,
        String type,
        String model,
        SortedMap<String, AttributeValue> attributes,
        List<DeviceInstance> instances) {

    public DeviceGroup {
        Objects.requireNonNull(vendor, "vendor");
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(model, "model");
        attributes = java.util.Collections.unmodifiableSortedMap(new TreeMap<>(attributes));
        instances = List.copyOf(instances);
    }

    public DeviceGroup(
            String vendor,
            String type,
            String model,
            Map<String, AttributeValue> attributes,
            List<DeviceInstance> instances) {
        this(vendor, type, model, new TreeMap<>(attributes), instances);
    }

    /** {@code vendor/type/model}, the most specific name a task can ask for. */
    public String id() {
        return vendor + "/" + type + "/" + model;
    }
}
