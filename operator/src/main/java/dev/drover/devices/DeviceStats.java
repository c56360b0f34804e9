package dev.drover.devices;

import dev.drover.deviceplugin.InstanceStats;
import dev.drover.state.DeviceReservation;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.OptionalLong;

/**
 * An allocation's device statistics: per task, each of its instances; per
 * allocation, one entry per device group that merges every instance of the
 * group, even when several tasks use it (Nomad lists one entry per task).
 * Lookups go through the manager's index: O(the allocation's devices).
 */
public final class DeviceStats {

    /** One device group's instances merged: utilization averaged, memory and power summed, temperature the hottest. */
    public record GroupStats(
            String vendor,
            String type,
            String model,
            List<String> ids,
            OptionalDouble gpuUtilPercent,
            OptionalLong memoryUsedMiB,
            OptionalLong memoryTotalMiB,
            OptionalDouble temperatureC,
            OptionalDouble powerW) {}

    /** Per task and per group. */
    public record AllocationStats(Map<String, List<InstanceStats>> byTask, List<GroupStats> byGroup) {

        /** An allocation with no devices, or an agent without device plugins. */
        public static final AllocationStats NONE = new AllocationStats(Map.of(), List.of());
    }

    private DeviceStats() {}

    public static AllocationStats of(List<DeviceReservation> reservations, DeviceManager devices) {
        Map<String, List<InstanceStats>> byTask = new LinkedHashMap<>();
        Map<String, List<InstanceStats>> byGroup = new LinkedHashMap<>();
        Map<String, DeviceReservation> groupOf = new LinkedHashMap<>();
        for (DeviceReservation r : reservations) {
            String group = r.vendor() + "/" + r.type() + "/" + r.model();
            groupOf.putIfAbsent(group, r);
            for (String id : r.ids()) {
                devices.stats(id).ifPresent(s -> {
                    byTask.computeIfAbsent(r.task(), k -> new ArrayList<>()).add(s);
                    byGroup.computeIfAbsent(group, k -> new ArrayList<>()).add(s);
                });
            }
        }
        List<GroupStats> groups = new ArrayList<>();
        byGroup.forEach((key, stats) -> {
            DeviceReservation r = groupOf.get(key);
            groups.add(new GroupStats(
                    r.vendor(),
                    r.type(),
                    r.model(),
                    stats.stream().map(InstanceStats::id).toList(),
                    average(stats.stream().map(InstanceStats::gpuUtilPercent).toList()),
                    sum(stats.stream().map(InstanceStats::memoryUsedMiB).toList()),
                    sum(stats.stream().map(InstanceStats::memoryTotalMiB).toList()),
                    max(stats.stream().map(InstanceStats::temperatureC).toList()),
                    sumD(stats.stream().map(InstanceStats::powerW).toList())));
        });
        return new AllocationStats(byTask, groups);
    }

    private static OptionalDouble average(List<OptionalDouble> values) {
        return values.stream()
                .filter(OptionalDouble::isPresent)
                .mapToDouble(OptionalDouble::getAsDouble)
                .average();
    }

    private static OptionalDouble max(List<OptionalDouble> values) {
        return values.stream()
                .filter(OptionalDouble::isPresent)
                .mapToDouble(OptionalDouble::getAsDouble)
                .max();
    }

    private static OptionalDouble sumD(List<OptionalDouble> values) {
        return values.stream().anyMatch(OptionalDouble::isPresent)
                ? OptionalDouble.of(values.stream()
                        .filter(OptionalDouble::isPresent)
                        .mapToDouble(OptionalDouble::getAsDouble)
                        .sum())
                : OptionalDouble.empty();
    }

    private static OptionalLong sum(List<OptionalLong> values) {
        return values.stream().anyMatch(OptionalLong::isPresent)
                ? OptionalLong.of(values.stream()
                        .filter(OptionalLong::isPresent)
                        .mapToLong(OptionalLong::getAsLong)
                        .sum())
                : OptionalLong.empty();
    }
}
