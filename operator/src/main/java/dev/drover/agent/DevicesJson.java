package dev.drover.agent;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.drover.deviceplugin.AttributeValue;
import dev.drover.deviceplugin.DeviceGroup;
import dev.drover.deviceplugin.DeviceInstance;
import dev.drover.deviceplugin.Fingerprint;
import dev.drover.deviceplugin.InstanceStats;
import dev.drover.deviceplugin.Unit;
import java.time.Instant;
import java.util.List;
import java.util.OptionalDouble;
import java.util.OptionalLong;

/**
 * {@code drover-agent devices -o json}: the report as one JSON object, and each change {@code --watch} sees as one
 * object on a line of its own. The field names are documented in docs/devices.md and kept stable for scripts; a value
 * a plugin does not report is left out, never null or 0.
 */
final class DevicesJson {

    private static final ObjectMapper JSON = new ObjectMapper();

    private DevicesJson() {}

    /** The whole report, indented. */
    static String report(List<PluginReport> reports) {
        ObjectNode root = JSON.createObjectNode();
        ArrayNode plugins = root.putArray("plugins");
        for (PluginReport r : reports) {
            plugins.add(plugin(r));
        }
        return root.toPrettyString();
    }

    /** One change seen while watching, on one line. */
    static String change(String plugin, Instant at, FingerprintChanges.Change c) {
        ObjectNode n = JSON.createObjectNode();
        n.put("time", at.toString());
        n.put("plugin", plugin);
        n.put("change", c.kind().json());
        if (c.kind() == FingerprintChanges.Kind.AVAILABILITY) {
            if (!c.detail().isEmpty()) {
                n.put("unavailableReason", c.detail());
            }
            return n.toString();
        }
        n.put("group", c.group());
        n.set("instance", instance(c.instance(), null));
        if (!c.detail().isEmpty()) {
            n.put("detail", c.detail());
        }
        return n.toString();
    }

    private static ObjectNode plugin(PluginReport r) {
        ObjectNode n = JSON.createObjectNode();
        n.put("name", r.name());
        n.put("version", r.version());
        n.set("config", JSON.valueToTree(r.config()));
        r.error().ifPresent(e -> n.put("error", e));
        if (r.fingerprint().isEmpty()) {
            return n;
        }
        Fingerprint fp = r.fingerprint().get();
        fp.unavailableReason().ifPresent(u -> n.put("unavailableReason", u));
        ArrayNode groups = n.putArray("groups");
        for (DeviceGroup g : fp.groups()) {
            ObjectNode gn = groups.addObject();
            gn.put("id", g.id());
            gn.put("vendor", g.vendor());
            gn.put("type", g.type());
            gn.put("model", g.model());
            ObjectNode attributes = gn.putObject("attributes");
            g.attributes().forEach((name, value) -> attributes.set(name, attribute(value)));
            ArrayNode instances = gn.putArray("instances");
            for (DeviceInstance i : g.instances()) {
                instances.add(instance(i, r.stats().get(i.id())));
            }
        }
        return n;
    }

    private static ObjectNode attribute(AttributeValue v) {
        ObjectNode n = JSON.createObjectNode();
        switch (v) {
            case AttributeValue.Text t -> n.put("value", t.value());
            case AttributeValue.Int i -> {
                n.put("value", i.value());
                unit(n, i.unit());
            }
            case AttributeValue.Float f -> {
                n.put("value", f.value());
                unit(n, f.unit());
            }
            case AttributeValue.Bool b -> n.put("value", b.value());
        }
        n.put("display", v.display());
        return n;
    }

    private static void unit(ObjectNode n, Unit unit) {
        if (unit != Unit.NONE) {
            n.put("unit", unit.symbol());
        }
    }

    /** An instance, with its statistics sample when there is one. */
    private static ObjectNode instance(DeviceInstance i, InstanceStats stats) {
        ObjectNode n = JSON.createObjectNode();
        n.put("id", i.id());
        n.put("healthy", i.healthy());
        n.put("healthDescription", i.healthDescription());
        i.pciBusId().ifPresent(p -> n.put("pciBusId", p));
        i.gpu().ifPresent(slot -> {
            n.put("gpuIndex", slot.index());
            n.put("gpuUuid", slot.gpuUuid());
            slot.gpuInstanceId().ifPresent(gi -> {
                n.put("migParent", slot.gpuUuid());
                n.put("gpuInstanceId", gi);
            });
        });
        if (stats != null) {
            n.set("stats", stats(stats));
        }
        return n;
    }

    private static ObjectNode stats(InstanceStats s) {
        ObjectNode n = JSON.createObjectNode();
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

    private static void put(ObjectNode n, String name, OptionalDouble v) {
        v.ifPresent(d -> n.put(name, d));
    }

    private static void put(ObjectNode n, String name, OptionalLong v) {
        v.ifPresent(l -> n.put(name, l));
    }
}
