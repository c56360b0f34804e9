package dev.drover.admission;

import dev.drover.api.v1alpha1.DeviceRequest;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Picks the instances an allocation's device requests get out of what the node offers it: task by task in the
 * spec's order, each request from the instances its task holds first (so a task keeps its instances across an
 * update), then from the free ones in their order. Pure.
 */
public final class DevicePicker {

    /**
     * What was picked.
     *
     * @param devices  the instances of each task that asks for devices, by task name
     * @param shortage one part per device name that could not be satisfied, e.g. {@code device nvidia/gpu: asked 3,
     *                 2 free}; empty when every request was
     */
    public record Picks(Map<String, List<Device>> devices, List<String> shortage) {

        public boolean satisfied() {
            return shortage.isEmpty();
        }
    }

    private DevicePicker() {}

    public static Picks pick(Map<String, List<DeviceRequest>> asks, DeviceOffer offer) {
        Set<String> taken = new HashSet<>();
        Map<String, List<Device>> picked = new LinkedHashMap<>();
        Map<String, Long> asked = new LinkedHashMap<>(); // long: counts up to 2^31-1 each, summed across requests
        Set<String> unsatisfied = new LinkedHashSet<>();
        asks.forEach((task, requests) -> {
            List<Device> candidates = Stream.concat(
                            offer.held().getOrDefault(task, List.of()).stream(), offer.free().stream())
                    .toList();
            List<Device> mine = new ArrayList<>();
            for (DeviceRequest request : requests) {
                int count = request.effectiveCount();
                asked.merge(request.getName(), (long) count, Long::sum);
                List<Device> got = candidates.stream()
                        .filter(d -> !taken.contains(d.id()) && d.matches(request.getName()))
                        .limit(count)
                        .toList();
                if (got.size() < count) {
                    unsatisfied.add(request.getName());
                    continue;
                }
                got.forEach(d -> taken.add(d.id()));
                mine.addAll(got);
            }
            if (!mine.isEmpty()) {
                picked.put(task, List.copyOf(mine));
            }
        });
        if (unsatisfied.isEmpty()) {
            return new Picks(picked, List.of());
        }
        List<String> shortage = new ArrayList<>();
        for (String name : unsatisfied) {
            shortage.add("device " + name + ": asked " + asked.get(name) + ", " + available(offer, name) + " free");
        }
        return new Picks(Map.of(), shortage);
    }

    /** How many instances matching {@code name} the allocation could have: free ones and those it holds. */
    private static long available(DeviceOffer offer, String name) {
        return Stream.concat(
                        offer.free().stream(), offer.held().values().stream().flatMap(List::stream))
                .filter(d -> d.matches(name))
                .map(Device::id)
                .distinct()
                .count();
    }
}
