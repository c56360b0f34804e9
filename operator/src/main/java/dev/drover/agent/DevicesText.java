package dev.drover.agent;

import static dev.drover.cli.TerminalText.clean;

import dev.drover.cli.TerminalText;
import dev.drover.deviceplugin.DeviceGroup;
import dev.drover.deviceplugin.DeviceInstance;
import dev.drover.deviceplugin.Fingerprint;
import dev.drover.deviceplugin.InstanceStats;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.OptionalLong;
import java.util.TreeMap;

/**
 * {@code drover-agent devices} for a person: each plugin, each device group with its attributes, a table of its
 * instances and, with {@code --stats}, one of their statistics; every value a plugin sent is escaped and cut
 * ({@link TerminalText#clean}), since a plugin's text reaches the terminal.
 */
final class DevicesText {

    private static final String ABSENT = "-";
    private static final String INDENT = "    ";

    private DevicesText() {}

    static String report(List<PluginReport> reports, boolean withStats) {
        StringBuilder out = new StringBuilder();
        for (PluginReport r : reports) {
            if (!out.isEmpty()) {
                out.append('\n');
            }
            out.append("plugin ")
                    .append(clean(r.name()))
                    .append(" ")
                    .append(clean(r.version()))
                    .append(config(r.config()))
                    .append('\n');
            boolean saysWhy =
                    r.fingerprint().flatMap(Fingerprint::unavailableReason).isPresent();
            if (!saysWhy) { // "no devices: REASON" below says it
                r.error()
                        .ifPresent(e -> out.append("  error: ").append(clean(e)).append('\n'));
            }
            r.fingerprint().ifPresent(fp -> fingerprint(fp, r.stats(), withStats, out));
        }
        return out.toString();
    }

    /** One change seen while watching: time, plugin, what changed, the instance, its health or what it was. */
    static String change(String plugin, Instant at, FingerprintChanges.Change c) {
        String time = at.truncatedTo(ChronoUnit.SECONDS).toString();
        String kind = c.kind().json();
        if (c.kind() == FingerprintChanges.Kind.AVAILABILITY) {
            String what = c.detail().isEmpty() ? "devices available again" : "no devices: " + clean(c.detail());
            return String.join("  ", time, clean(plugin), kind, what);
        }
        DeviceInstance i = c.instance();
        String detail = switch (c.kind()) {
            case HEALTH -> FingerprintChanges.health(i) + " (was " + c.detail() + ")";
            case CHANGED -> "now in " + c.group() + ", " + c.detail();
            case ADDED -> "in " + c.group() + ", " + FingerprintChanges.health(i);
            case REMOVED, AVAILABILITY -> "was in " + c.group();
        };
        return String.join("  ", time, clean(plugin), kind, clean(i.id()), clean(detail));
    }

    private static String config(Map<String, Object> config) {
        if (config.isEmpty()) {
            return "";
        }
        List<String> pairs = new ArrayList<>();
        new TreeMap<>(config).forEach((k, v) -> pairs.add(clean(k) + "=" + clean(String.valueOf(v))));
        return " (" + String.join(", ", pairs) + ")";
    }

    private static void fingerprint(
            Fingerprint fp, Map<String, InstanceStats> stats, boolean withStats, StringBuilder out) {
        fp.unavailableReason()
                .ifPresent(u -> out.append("  no devices: ").append(clean(u)).append('\n'));
        if (fp.groups().isEmpty() && fp.unavailableReason().isEmpty()) {
            out.append("  no devices\n");
        }
        for (DeviceGroup g : fp.groups()) {
            out.append("  ").append(clean(g.id())).append('\n');
            List<String[]> attributes = new ArrayList<>();
            g.attributes().forEach((k, v) -> attributes.add(new String[] {INDENT + clean(k), clean(v.display())}));
            out.append(TerminalText.columns(attributes));
            out.append(instances(g));
            if (withStats) {
                out.append('\n').append(stats(g, stats));
            }
        }
    }

    private static String instances(DeviceGroup g) {
        boolean mig = g.instances().stream()
                .anyMatch(i ->
                        i.gpu().isPresent() && i.gpu().get().gpuInstanceId().isPresent());
        List<String[]> rows = new ArrayList<>();
        rows.add(
                mig
                        ? new String[] {INDENT + "INSTANCE", "HEALTH", "PCI BUS ID", "GPU", "MIG", "DESCRIPTION"}
                        : new String[] {INDENT + "INSTANCE", "HEALTH", "PCI BUS ID", "GPU", "DESCRIPTION"});
        for (DeviceInstance i : g.instances()) {
            String index = i.gpu().map(s -> Integer.toString(s.index())).orElse(ABSENT);
            String pci = i.pciBusId().map(TerminalText::clean).orElse(ABSENT);
            String health = i.healthy() ? "healthy" : "unhealthy";
            String description = i.healthDescription().isEmpty() ? "" : clean(i.healthDescription());
            if (mig) {
                String of = i.gpu()
                        .filter(s -> s.gpuInstanceId().isPresent())
                        .map(s -> "GI " + s.gpuInstanceId().getAsInt() + " of " + clean(s.gpuUuid()))
                        .orElse(ABSENT);
                rows.add(new String[] {INDENT + clean(i.id()), health, pci, index, of, description});
            } else {
                rows.add(new String[] {INDENT + clean(i.id()), health, pci, index, description});
            }
        }
        return TerminalText.columns(rows);
    }

    private static String stats(DeviceGroup g, Map<String, InstanceStats> stats) {
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {
            INDENT + "INSTANCE",
            "GPU UTIL",
            "MEM UTIL",
            "MEMORY USED/TOTAL",
            "TEMP",
            "POWER",
            "ECC CORR/UNCORR",
            "SM CLOCK",
            "MEM CLOCK"
        });
        for (DeviceInstance i : g.instances()) {
            InstanceStats s = stats.get(i.id());
            if (s == null) {
                rows.add(new String[] {INDENT + clean(i.id()), "no sample"});
                continue;
            }
            rows.add(new String[] {
                INDENT + clean(i.id()),
                unit(s.gpuUtilPercent(), "%"),
                unit(s.memUtilPercent(), "%"),
                pair(s.memoryUsedMiB(), s.memoryTotalMiB(), " MiB"),
                unit(s.temperatureC(), "C"),
                unit(s.powerW(), "W"),
                pair(s.eccErrorsCorrected(), s.eccErrorsUncorrected(), ""),
                unit(s.smClockMHz(), "MHz"),
                unit(s.memoryClockMHz(), "MHz")
            });
        }
        return TerminalText.columns(rows);
    }

    private static String unit(OptionalDouble v, String unit) {
        return v.isPresent() ? number(v.getAsDouble()) + " " + unit : ABSENT;
    }

    private static String unit(OptionalLong v, String unit) {
        return v.isPresent() ? v.getAsLong() + " " + unit : ABSENT;
    }

    private static String pair(OptionalLong a, OptionalLong b, String unit) {
        if (a.isEmpty() && b.isEmpty()) {
            return ABSENT;
        }
        return text(a) + "/" + text(b) + unit;
    }

    private static String text(OptionalLong v) {
        return v.isPresent() ? Long.toString(v.getAsLong()) : ABSENT;
    }

    /** {@code 37}, {@code 31.5}: no trailing {@code .0}, no exponent. */
    static String number(double d) {
        if (!Double.isFinite(d)) {
            return Double.toString(d);
        }
        return BigDecimal.valueOf(d).stripTrailingZeros().toPlainString();
    }
}
