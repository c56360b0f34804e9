package dev.drover.deviceplugin.nvidia;

import dev.drover.deviceplugin.AttributeValue;
import dev.drover.deviceplugin.InstanceStats;
import dev.drover.deviceplugin.Unit;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Reads what {@code nvidia-smi} says about the GPUs, for diagnostics when NVML cannot be bound (it is the
 * tool people run when something looks wrong, and its view is worth comparing). Run {@link #command()} and
 * give its output to {@link #parse}. Values nvidia-smi cannot give ({@code [N/A]}, {@code [Not Supported]})
 * are absent, as with NVML.
 */
public final class NvidiaSmiCsv {

    /** The columns asked for, in order. */
    public static final List<String> FIELDS = List.of(
            "uuid",
            "name",
            "pci.bus_id",
            "memory.total",
            "memory.used",
            "utilization.gpu",
            "utilization.memory",
            "temperature.gpu",
            "power.draw",
            "power.limit",
            "clocks.sm",
            "clocks.mem",
            "clocks.max.sm",
            "clocks.max.mem",
            "driver_version",
            "ecc.errors.corrected.volatile.total",
            "ecc.errors.uncorrected.volatile.total");

    /** One GPU as nvidia-smi reports it. */
    public record Gpu(
            String uuid,
            String model,
            Optional<String> pciBusId,
            SortedMap<String, AttributeValue> attributes,
            InstanceStats stats) {}

    private NvidiaSmiCsv() {}

    /** {@code nvidia-smi --query-gpu=... --format=csv,noheader,nounits}. */
    public static List<String> command() {
        return List.of("nvidia-smi", "--query-gpu=" + String.join(",", FIELDS), "--format=csv,noheader,nounits");
    }

    /**
     * @throws IllegalArgumentException naming the line and column when a line has the wrong number of
     *                                  columns or a number that is not one
     */
    public static List<Gpu> parse(String output, Instant at) {
        List<Gpu> gpus = new ArrayList<>();
        String[] lines = output.split("\\R");
        for (int n = 0; n < lines.length; n++) {
            String line = lines[n];
            if (line.isBlank()) continue;
            String[] cells = line.split(",", -1);
            if (cells.length != FIELDS.size()) {
                throw new IllegalArgumentException("nvidia-smi output line " + (n + 1) + " has " + cells.length
                        + " columns, expected " + FIELDS.size() + " (" + String.join(",", FIELDS) + "): " + line);
            }
            gpus.add(row(cells, n + 1, at));
        }
        return gpus;
    }

    private static Gpu row(String[] raw, int line, Instant at) {
        Row r = new Row(raw, line);
        String uuid = r.text("uuid")
                .orElseThrow(
                        () -> new IllegalArgumentException("nvidia-smi output line " + line + ": uuid is missing"));
        SortedMap<String, AttributeValue> attrs = new TreeMap<>();
        r.number("memory.total")
                .ifPresent(v -> attrs.put(GpuInventory.MEMORY, AttributeValue.integer((long) v, Unit.MIB)));
        r.number("power.limit")
                .ifPresent(v -> attrs.put(GpuInventory.POWER_LIMIT, AttributeValue.integer(Math.round(v), Unit.WATT)));
        r.number("clocks.max.sm")
                .ifPresent(v -> attrs.put(GpuInventory.CORES_CLOCK, AttributeValue.integer((long) v, Unit.MHZ)));
        r.number("clocks.max.mem")
                .ifPresent(v -> attrs.put(GpuInventory.MEMORY_CLOCK, AttributeValue.integer((long) v, Unit.MHZ)));
        r.text("driver_version").ifPresent(v -> attrs.put(GpuInventory.DRIVER_VERSION, AttributeValue.text(v)));

        InstanceStats.Builder b = InstanceStats.builder(uuid, at);
        set(r.number("utilization.gpu"), b::gpuUtilPercent);
        set(r.number("utilization.memory"), b::memUtilPercent);
        set(r.number("memory.used"), v -> b.memoryUsedMiB((long) v));
        set(r.number("memory.total"), v -> b.memoryTotalMiB((long) v));
        set(r.number("temperature.gpu"), b::temperatureC);
        set(r.number("power.draw"), b::powerW);
        set(r.number("ecc.errors.corrected.volatile.total"), v -> b.eccErrorsCorrected((long) v));
        set(r.number("ecc.errors.uncorrected.volatile.total"), v -> b.eccErrorsUncorrected((long) v));
        set(r.number("clocks.sm"), v -> b.smClockMHz((long) v));
        set(r.number("clocks.mem"), v -> b.memoryClockMHz((long) v));
        return new Gpu(uuid, r.text("name").orElse(""), r.text("pci.bus_id"), attrs, b.build());
    }

    private static void set(OptionalDouble v, java.util.function.DoubleConsumer to) {
        v.ifPresent(to);
    }

    /** One line's cells by field name. */
    private record Row(String[] cells, int line) {

        Optional<String> text(String field) {
            String v = cells[FIELDS.indexOf(field)].strip();
            return absent(v) ? Optional.empty() : Optional.of(v);
        }

        OptionalDouble number(String field) {
            Optional<String> t = text(field);
            if (t.isEmpty()) return OptionalDouble.empty();
            // tolerate units left in (output without nounits): "15360 MiB", "31.50 W"
            String v = t.get().split("\\s+")[0];
            try {
                return OptionalDouble.of(Double.parseDouble(v));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(
                        "nvidia-smi output line " + line + ": " + field + " is '" + t.get() + "', not a number");
            }
        }

        private static boolean absent(String v) {
            return v.isEmpty() || v.startsWith("[") || v.equals("N/A") || v.equals("Not Supported");
        }
    }
}
