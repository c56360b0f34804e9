package dev.drover.httpapi;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.drover.deviceplugin.InstanceStats;
import dev.drover.devices.DeviceStats;
import dev.drover.driver.DriverException;
import dev.drover.driver.TaskStats;
import dev.drover.state.AllocId;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalLong;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * An allocation's resource usage, as {@code GET .../stats} answers it:
 * <pre>
 * {"allocation": "NS/NAME", "node": ..., "timestamp": ..., "windowSeconds": 0.25,
 *  "resourceUsage": {"cpu": {"seconds": ..., "percent": ...}, "memory": {"rssBytes": ...}},
 *  "tasks": {"TASK": {"state": "Running", "resourceUsage": {...}, "devices": [instance, ...]}},
 *  "devices": [{"vendor", "type", "model", "ids", "gpuUtilPercent", "memoryUsedMiB", ...}]}
 * </pre>
 * Each running task's CPU time is read twice, a window apart (all tasks at once); the percentage is the CPU time
 * used in between over the window (100 = one core). The allocation's figures sum its tasks'. A task that is not
 * running has its state only; one whose driver could not answer has an {@code error}. Device figures the device
 * cannot report are left out, never zero. Device entries per allocation merge each device group
 * ({@link DeviceStats}).
 */
final class UsageReport {

    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private UsageReport() {}

    /** One task's two readings, or why there are none. */
    private record Readings(Optional<TaskStats> first, Optional<TaskStats> second, String error) {}

    static ObjectNode collect(AllocId id, String node, LocalAllocation local, Clock clock, Duration window)
            throws InterruptedException {
        Map<String, Readings> readings = read(local, window);
        ObjectNode report = NODES.objectNode();
        report.put("allocation", id.toString());
        report.put("node", node);
        report.put("timestamp", clock.instant().toString());
        report.put("windowSeconds", window.toNanos() / 1e9);
        double cpuSeconds = 0;
        double percent = 0;
        long rss = 0;
        boolean anyPercent = false;
        ObjectNode tasks = NODES.objectNode();
        DeviceStats.AllocationStats devices = local.devices();
        for (String task : local.tasks()) {
            ObjectNode t = tasks.putObject(task);
            t.put("state", local.state(task));
            Readings r = readings.get(task);
            if (r.error() != null) {
                t.put("error", r.error());
            }
            Optional<TaskStats> last = r.second().or(r::first);
            if (last.isPresent()) {
                ObjectNode usage = t.putObject("resourceUsage");
                ObjectNode cpu = usage.putObject("cpu");
                double seconds = last.get().cpuTime().toNanos() / 1e9;
                cpu.put("seconds", seconds);
                cpuSeconds += seconds;
                if (r.first().isPresent() && r.second().isPresent()) {
                    double p = percent(r.first().get(), r.second().get());
                    cpu.put("percent", p);
                    percent += p;
                    anyPercent = true;
                }
                usage.putObject("memory").put("rssBytes", last.get().memoryBytes());
                rss += last.get().memoryBytes();
            }
            List<InstanceStats> instances = devices.byTask().getOrDefault(task, List.of());
            if (!instances.isEmpty()) {
                ArrayNode list = t.putArray("devices");
                instances.forEach(s -> list.add(instance(s)));
            }
        }
        ObjectNode usage = report.putObject("resourceUsage");
        ObjectNode cpu = usage.putObject("cpu").put("seconds", cpuSeconds);
        if (anyPercent) {
            cpu.put("percent", percent);
        }
        usage.putObject("memory").put("rssBytes", rss);
        report.set("tasks", tasks);
        ArrayNode groups = report.putArray("devices");
        devices.byGroup().forEach(g -> groups.add(group(g)));
        return report;
    }

    /** Reads every task at once, twice, {@code window} apart. */
    private static Map<String, Readings> read(LocalAllocation local, Duration window) throws InterruptedException {
        Map<String, Readings> out = new LinkedHashMap<>();
        try (ExecutorService readers = Executors.newVirtualThreadPerTaskExecutor()) {
            Map<String, Future<Readings>> pending = new LinkedHashMap<>();
            for (String task : local.tasks()) {
                pending.put(task, readers.submit(() -> readTwice(local, task, window)));
            }
            for (Map.Entry<String, Future<Readings>> e : pending.entrySet()) {
                try {
                    out.put(e.getKey(), e.getValue().get());
                } catch (ExecutionException failed) {
                    out.put(
                            e.getKey(),
                            new Readings(Optional.empty(), Optional.empty(), String.valueOf(failed.getCause())));
                }
            }
        }
        return out;
    }

    private static Readings readTwice(LocalAllocation local, String task, Duration window) throws InterruptedException {
        Optional<TaskStats> first;
        try {
            first = local.stats(task);
        } catch (DriverException e) {
            return new Readings(Optional.empty(), Optional.empty(), e.getMessage());
        }
        if (first.isEmpty()) {
            return new Readings(first, Optional.empty(), null);
        }
        Thread.sleep(window);
        try {
            return new Readings(first, local.stats(task), null);
        } catch (DriverException e) {
            return new Readings(first, Optional.empty(), null); // it stopped meanwhile: the first reading stands
        }
    }

    private static double percent(TaskStats first, TaskStats second) {
        long wall = Duration.between(first.at(), second.at()).toNanos();
        long cpu = second.cpuTime().minus(first.cpuTime()).toNanos();
        if (wall <= 0 || cpu < 0) {
            return 0;
        }
        return Math.round(cpu * 10_000.0 / wall) / 100.0; // two decimals
    }

    private static JsonNode instance(InstanceStats s) {
        ObjectNode n = NODES.objectNode();
        n.put("id", s.id());
        n.put("timestamp", s.timestamp().toString());
        put(n, "gpuUtilPercent", s.gpuUtilPercent());
        put(n, "memUtilPercent", s.memUtilPercent());
        put(n, "memoryUsedMiB", s.memoryUsedMiB());
        put(n, "memoryTotalMiB", s.memoryTotalMiB());
        put(n, "temperatureC", s.temperatureC());
        put(n, "powerW", s.powerW());
        put(n, "eccErrorsCorrected", s.eccErrorsCorrected());
        put(n, "eccErrorsUncorrected", s.eccErrorsUncorrected());
        put(n, "smClockMHz", s.smClockMHz());
        put(n, "memoryClockMHz", s.memoryClockMHz());
        return n;
    }

    private static JsonNode group(DeviceStats.GroupStats g) {
        ObjectNode n = NODES.objectNode();
        n.put("vendor", g.vendor());
        n.put("type", g.type());
        n.put("model", g.model());
        ArrayNode ids = n.putArray("ids");
        g.ids().forEach(ids::add);
        put(n, "gpuUtilPercent", g.gpuUtilPercent());
        put(n, "memoryUsedMiB", g.memoryUsedMiB());
        put(n, "memoryTotalMiB", g.memoryTotalMiB());
        put(n, "temperatureC", g.temperatureC());
        put(n, "powerW", g.powerW());
        return n;
    }

    private static void put(ObjectNode n, String key, OptionalDouble v) {
        v.ifPresent(d -> n.put(key, d));
    }

    private static void put(ObjectNode n, String key, OptionalLong v) {
        v.ifPresent(l -> n.put(key, l));
    }
}
