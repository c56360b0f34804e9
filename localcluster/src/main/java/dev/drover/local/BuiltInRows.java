package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;

/**
 * The columns a real API server prints for the built-ins people read most, Events and Nodes (Kubernetes' internal
 * printers), so {@code kubectl get events} and {@code kubectl get nodes} (with {@code -o wide}) read as they do on a
 * cluster. Every column is sent; kubectl hides those of priority 1 unless asked for wide output.
 */
final class BuiltInRows {

    private record Column(String name, int priority, String format) {}

    private static final List<Column> EVENTS = List.of(
            new Column("Last Seen", 0, ""),
            new Column("Type", 0, ""),
            new Column("Reason", 0, ""),
            new Column("Object", 0, ""),
            new Column("Subobject", 1, ""),
            new Column("Source", 1, ""),
            new Column("Message", 0, ""),
            new Column("First Seen", 1, ""),
            new Column("Count", 1, ""),
            new Column("Name", 1, "name"));

    private static final List<Column> NODES = List.of(
            new Column("Name", 0, "name"),
            new Column("Status", 0, ""),
            new Column("Roles", 0, ""),
            new Column("Age", 0, ""),
            new Column("Version", 0, ""),
            new Column("Internal-IP", 1, ""),
            new Column("External-IP", 1, ""),
            new Column("OS-Image", 1, ""),
            new Column("Kernel-Version", 1, ""),
            new Column("Container-Runtime", 1, ""));

    private static final String ROLE_PREFIX = "node-role.kubernetes.io/";

    private BuiltInRows() {}

    /** Whether {@code type} has columns of its own here. */
    static boolean has(ResourceType type) {
        return columns(type) != null;
    }

    private static List<Column> columns(ResourceType type) {
        if (type == null || !type.group().isEmpty()) {
            return null;
        }
        return switch (type.plural()) {
            case "events" -> EVENTS;
            case "nodes" -> NODES;
            default -> null;
        };
    }

    static void columnDefinitions(ResourceType type, ArrayNode defs) {
        for (Column c : columns(type)) {
            defs.addObject()
                    .put("name", c.name())
                    .put("type", "string")
                    .put("format", c.format())
                    .put("description", "")
                    .put("priority", c.priority());
        }
    }

    static void cells(ResourceType type, JsonNode item, Instant now, ArrayNode cells) {
        if (type.plural().equals("events")) {
            event(item, now, cells);
        } else {
            node(item, now, cells);
        }
    }

    /** As the API server's event printer: times from eventTime and series where the older fields are empty. */
    private static void event(JsonNode e, Instant now, ArrayNode cells) {
        String first = e.path("firstTimestamp").asText("");
        String firstSeen = first.isEmpty() ? Tables.age(e.path("eventTime").asText(""), now) : Tables.age(first, now);
        String last = e.path("lastTimestamp").asText("");
        String lastSeen = last.isEmpty() ? firstSeen : Tables.age(last, now);
        long count = e.path("count").asLong(0);
        JsonNode series = e.path("series");
        if (series.isObject()) {
            lastSeen = Tables.age(series.path("lastObservedTime").asText(""), now);
            count = series.path("count").asLong(0);
        } else if (count == 0) {
            count = 1; // a single Event of the newer API has no count
        }
        JsonNode involved = e.path("involvedObject");
        String kind = involved.path("kind").asText("").toLowerCase(Locale.ROOT);
        String name = involved.path("name").asText("");
        cells.add(lastSeen)
                .add(e.path("type").asText(""))
                .add(e.path("reason").asText(""))
                .add(name.isEmpty() ? kind : kind + "/" + name)
                .add(involved.path("fieldPath").asText(""))
                .add(source(e))
                .add(e.path("message").asText("").strip())
                .add(firstSeen)
                .add(count)
                .add(e.path("metadata").path("name").asText(""));
    }

    private static String source(JsonNode e) {
        String component = firstNonEmpty(
                e.path("source").path("component").asText(""),
                e.path("reportingComponent").asText(""));
        String instance = firstNonEmpty(
                e.path("source").path("host").asText(""),
                e.path("reportingInstance").asText(""));
        return instance.isEmpty() ? component : component + ", " + instance;
    }

    private static String firstNonEmpty(String a, String b) {
        return a.isEmpty() ? b : a;
    }

    /** As the API server's node printer: Ready or NotReady (Unknown without it), SchedulingDisabled, the roles. */
    private static void node(JsonNode n, Instant now, ArrayNode cells) {
        List<String> status = new ArrayList<>();
        for (JsonNode c : n.path("status").path("conditions")) {
            if (c.path("type").asText().equals("Ready")) {
                status.add(c.path("status").asText().equals("True") ? "Ready" : "NotReady");
            }
        }
        if (status.isEmpty()) {
            status.add("Unknown");
        }
        if (n.path("spec").path("unschedulable").asBoolean(false)) {
            status.add("SchedulingDisabled");
        }
        TreeSet<String> roles = new TreeSet<>();
        n.path("metadata").path("labels").properties().forEach(label -> {
            if (label.getKey().startsWith(ROLE_PREFIX) && label.getKey().length() > ROLE_PREFIX.length()) {
                roles.add(label.getKey().substring(ROLE_PREFIX.length()));
            } else if (label.getKey().equals("kubernetes.io/role")
                    && !label.getValue().asText().isEmpty()) {
                roles.add(label.getValue().asText());
            }
        });
        JsonNode info = n.path("status").path("nodeInfo");
        cells.add(n.path("metadata").path("name").asText(""))
                .add(String.join(",", status))
                .add(roles.isEmpty() ? "<none>" : String.join(",", roles))
                .add(Tables.age(n.path("metadata").path("creationTimestamp").asText(""), now))
                .add(info.path("kubeletVersion").asText(""))
                .add(address(n, "InternalIP"))
                .add(address(n, "ExternalIP"))
                .add(orUnknown(info.path("osImage").asText("")))
                .add(orUnknown(info.path("kernelVersion").asText("")))
                .add(orUnknown(info.path("containerRuntimeVersion").asText("")));
    }

    private static String address(JsonNode n, String type) {
        for (JsonNode a : n.path("status").path("addresses")) {
            if (a.path("type").asText().equals(type)) {
                return a.path("address").asText();
            }
        }
        return "<none>";
    }

    private static String orUnknown(String s) {
        return s.isEmpty() ? "<unknown>" : s;
    }
}
