package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.List;

/**
 * Server-side printing: the {@code meta.k8s.io/v1 Table} kubectl asks for on
 * {@code get}. CRDs get their printer columns; Events and Nodes the columns a real API server gives them
 * ({@link BuiltInRows}); other built-ins NAME and AGE.
 * Date columns become ages ("5m"), as the API server renders them.
 */
final class Tables {

    private static final ObjectMapper JSON = NestingDepth.mapper();

    private Tables() {}

    /** Whether the Accept header asks for a Table. */
    static boolean wanted(String accept) {
        return accept != null && accept.contains("as=Table");
    }

    static ObjectNode table(ResourceType type, JsonNode listOrObject, Instant now) {
        ObjectNode table = JSON.createObjectNode().put("kind", "Table").put("apiVersion", "meta.k8s.io/v1");
        ObjectNode meta = table.putObject("metadata");
        if (listOrObject.path("metadata").has("resourceVersion")) {
            meta.put(
                    "resourceVersion",
                    listOrObject.path("metadata").path("resourceVersion").asText());
        }
        ArrayNode defs = table.putArray("columnDefinitions");
        ArrayNode rows = table.putArray("rows");
        if (BuiltInRows.has(type)) {
            BuiltInRows.columnDefinitions(type, defs);
            for (JsonNode item : listOrObject.has("items") ? listOrObject.get("items") : List.of(listOrObject)) {
                ObjectNode row = rows.addObject();
                BuiltInRows.cells(type, item, now, row.putArray("cells"));
                partialObject(row, item);
            }
            return table;
        }
        List<JsonNode> columns = type == null ? List.of() : type.printerColumns();
        column(defs, "Name", "string", "name", 0);
        boolean hasAge = false;
        for (JsonNode c : columns) {
            column(
                    defs,
                    c.path("name").asText(),
                    c.path("type").asText("string"),
                    c.path("format").asText(""),
                    c.path("priority").asInt(0));
            hasAge |= c.path("jsonPath").asText().equals(".metadata.creationTimestamp");
        }
        if (!hasAge && columns.isEmpty()) {
            column(defs, "Age", "date", "", 0);
        }
        if (listOrObject.has("items")) {
            listOrObject.get("items").forEach(item -> row(rows, item, columns, now));
        } else {
            row(rows, listOrObject, columns, now);
        }
        return table;
    }

    private static void column(ArrayNode defs, String name, String type, String format, int priority) {
        defs.addObject()
                .put("name", name)
                .put("type", type)
                .put("format", format)
                .put("description", "")
                .put("priority", priority);
    }

    private static void row(ArrayNode rows, JsonNode item, List<JsonNode> columns, Instant now) {
        ObjectNode row = rows.addObject();
        ArrayNode cells = row.putArray("cells");
        cells.add(item.path("metadata").path("name").asText());
        if (columns.isEmpty()) {
            cells.add(age(item.path("metadata").path("creationTimestamp").asText(""), now));
        }
        for (JsonNode c : columns) {
            JsonNode v = Json.at(item, c.path("jsonPath").asText());
            if (v.isMissingNode() || v.isNull()) {
                cells.addNull();
            } else if (c.path("type").asText().equals("date")) {
                cells.add(age(v.asText(), now));
            } else {
                cells.add(v);
            }
        }
        partialObject(row, item);
    }

    private static void partialObject(ObjectNode row, JsonNode item) {
        ObjectNode object =
                row.putObject("object").put("kind", "PartialObjectMetadata").put("apiVersion", "meta.k8s.io/v1");
        object.set("metadata", item.path("metadata").deepCopy());
    }

    /** An age the way kubectl prints one: 45s, 3m12s, 2h, 4d, 2y. */
    static String age(String timestamp, Instant now) {
        if (timestamp.isEmpty()) {
            return "<unknown>";
        }
        Duration d = Duration.between(OffsetDateTime.parse(timestamp).toInstant(), now);
        long s = Math.max(0, d.toSeconds());
        if (s < 120) {
            return s + "s";
        }
        long m = s / 60;
        if (m < 10) {
            return m + "m" + (s % 60 == 0 ? "" : (s % 60) + "s");
        }
        if (m < 180) {
            return m + "m";
        }
        long h = m / 60;
        if (h < 8) {
            return h + "h" + (m % 60 == 0 ? "" : (m % 60) + "m");
        }
        if (h < 48) {
            return h + "h";
        }
        long days = h / 24;
        if (days < 8) {
            return days + "d" + (h % 24 == 0 ? "" : (h % 24) + "h");
        }
        return days < 730 ? days + "d" : (days / 365) + "y";
    }
}
