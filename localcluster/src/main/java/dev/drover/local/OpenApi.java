package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/**
 * OpenAPI v3 documents, one per group-version. Their write operations declare
 * the {@code fieldValidation} parameter, which is how kubectl learns that the
 * server validates fields itself: it then sends {@code fieldValidation=Strict}
 * and leaves the checking to {@link SchemaValidator}.
 */
final class OpenApi {

    private static final ObjectMapper JSON = NestingDepth.mapper();

    private final Catalog catalog;

    OpenApi(Catalog catalog) {
        this.catalog = catalog;
    }

    /** {@code /openapi/v3}: where each group-version's document is. */
    ObjectNode root() {
        ObjectNode root = JSON.createObjectNode();
        ObjectNode paths = root.putObject("paths");
        catalog.groups().forEach((group, versions) -> {
            for (String v : versions) {
                String key = group.isEmpty() ? "api/" + v : "apis/" + group + "/" + v;
                ObjectNode doc = groupVersion(group, v);
                paths.putObject(key)
                        .put(
                                "serverRelativeURL",
                                "/openapi/v3/" + key + "?hash=" + Integer.toHexString(doc.hashCode()));
            }
        });
        return root;
    }

    /** The document at {@code /openapi/v3/<api/v1 | apis/G/V>}, or null. */
    ObjectNode document(String path) {
        String rest = path.substring("/openapi/v3/".length());
        String[] s = rest.split("/");
        if (s.length == 2 && s[0].equals("api")) {
            return groupVersion("", s[1]);
        }
        if (s.length == 3 && s[0].equals("apis")) {
            return catalog.groups().getOrDefault(s[1], List.of()).contains(s[2]) ? groupVersion(s[1], s[2]) : null;
        }
        return null;
    }

    private ObjectNode groupVersion(String group, String version) {
        ObjectNode doc = JSON.createObjectNode().put("openapi", "3.0.0");
        doc.putObject("info").put("title", "Drover local API server").put("version", "v1.32.0");
        ObjectNode paths = doc.putObject("paths");
        ObjectNode schemas = doc.putObject("components").putObject("schemas");
        for (ResourceType t : catalog.types()) {
            if (!t.group().equals(group) || !t.version().equals(version)) {
                continue;
            }
            String schemaName = schemaName(t);
            schemas.set(schemaName, schema(t));
            String ref = "#/components/schemas/" + schemaName;
            String base = (group.isEmpty() ? "/api/" + version : "/apis/" + group + "/" + version)
                    + (t.namespaced() ? "/namespaces/{namespace}" : "") + "/" + t.plural();
            ObjectNode collection = paths.putObject(base);
            collection.set("get", operation(t, "list", null));
            collection.set("post", operation(t, "post", ref));
            ObjectNode item = paths.putObject(base + "/{name}");
            item.set("get", operation(t, "get", null));
            item.set("put", operation(t, "put", ref));
            item.set("patch", operation(t, "patch", ref));
            item.set("delete", operation(t, "delete", null));
            if (t.statusSubresource()) {
                ObjectNode status = paths.putObject(base + "/{name}/status");
                status.set("get", operation(t, "get", null));
                status.set("put", operation(t, "put", ref));
                status.set("patch", operation(t, "patch", ref));
            }
        }
        return doc;
    }

    private static ObjectNode operation(ResourceType t, String action, String bodyRef) {
        ObjectNode op = JSON.createObjectNode().put("x-kubernetes-action", action);
        op.putObject("x-kubernetes-group-version-kind")
                .put("group", t.group())
                .put("version", t.version())
                .put("kind", t.kind());
        ArrayNode params = op.putArray("parameters");
        if (bodyRef != null) {
            for (String name : List.of("dryRun", "fieldManager", "fieldValidation")) {
                params.addObject()
                        .put("name", name)
                        .put("in", "query")
                        .put("uniqueItems", true)
                        .putObject("schema")
                        .put("type", "string");
            }
            op.putObject("requestBody")
                    .putObject("content")
                    .putObject("application/json")
                    .putObject("schema")
                    .put("$ref", bodyRef);
        }
        op.putObject("responses").putObject("200").put("description", "OK");
        return op;
    }

    private static JsonNode schema(ResourceType t) {
        ObjectNode s;
        if (t.schema() == null) {
            s = JSON.createObjectNode().put("type", "object").put("x-kubernetes-preserve-unknown-fields", true);
        } else {
            s = t.schema().deepCopy();
            ObjectNode props = s.has("properties") ? (ObjectNode) s.get("properties") : s.putObject("properties");
            props.putObject("apiVersion").put("type", "string");
            props.putObject("kind").put("type", "string");
            props.putObject("metadata").put("type", "object").put("x-kubernetes-preserve-unknown-fields", true);
        }
        s.putArray("x-kubernetes-group-version-kind")
                .addObject()
                .put("group", t.group())
                .put("kind", t.kind())
                .put("version", t.version());
        return s;
    }

    private static String schemaName(ResourceType t) {
        if (t.group().isEmpty()) {
            return "io.k8s.api.core." + t.version() + "." + t.kind();
        }
        List<String> parts = new java.util.ArrayList<>(List.of(t.group().split("\\.")));
        java.util.Collections.reverse(parts);
        return String.join(".", parts) + "." + t.version() + "." + t.kind();
    }
}
