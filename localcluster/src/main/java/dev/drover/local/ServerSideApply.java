package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.drover.common.UserText;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Server-side apply ({@code PATCH} with {@code application/apply-patch+yaml}), the subset Drover's users meet: the
 * applied configuration merges into the object ({@link TypedFields}); what the manager applied before and leaves out
 * now is removed unless someone else owns it; changing a value another manager owns is a conflict unless forced,
 * and forcing takes the field over. Field sets live in {@code metadata.managedFields} ({@link ManagedFields}).
 */
final class ServerSideApply {

    static final String CONTENT_TYPE = "application/apply-patch+yaml";

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    private ServerSideApply() {}

    static boolean isApply(String contentType) {
        return contentType != null
                && contentType.toLowerCase(java.util.Locale.ROOT).startsWith(CONTENT_TYPE);
    }

    /** The applied configuration in {@code raw} (YAML or JSON), checked against the request's type and name. */
    static ObjectNode config(byte[] raw, ResourceType type, String name) {
        JsonNode parsed;
        try {
            parsed = YAML.readTree(raw);
        } catch (IOException | RuntimeException e) {
            throw new ApiFront.ApiError(
                    400, "BadRequest", "error decoding YAML: " + UserText.bare(String.valueOf(e.getMessage())));
        }
        if (!(parsed instanceof ObjectNode config)) {
            throw new ApiFront.ApiError(400, "BadRequest", "the applied configuration is not an object");
        }
        String apiVersion = config.path("apiVersion").asText("");
        String kind = config.path("kind").asText("");
        if (!apiVersion.equals(type.groupVersion()) || !kind.equals(type.kind())) {
            throw new ApiFront.ApiError(
                    400,
                    "BadRequest",
                    "the applied configuration must have apiVersion " + type.groupVersion() + " and kind "
                            + type.kind() + ", not " + Json.quote(UserText.bare(String.valueOf(apiVersion))) + " and "
                            + Json.quote(UserText.bare(String.valueOf(kind))));
        }
        String stated = config.path("metadata").path("name").asText("");
        if (!stated.equals(name)) {
            throw new ApiFront.ApiError(
                    400,
                    "BadRequest",
                    "the name of the object (" + UserText.bare(String.valueOf(stated))
                            + ") does not match the name on the URL (" + name + ")");
        }
        if (config.path("metadata").has("managedFields")) {
            throw new ApiFront.ApiError(
                    400, "BadRequest", "metadata.managedFields must be nil in an applied configuration");
        }
        return config;
    }

    /**
     * {@code live} (null when the object does not exist yet) with {@code config} applied by {@code manager} through
     * {@code subresource} (null or {@code status}), its managedFields updated.
     *
     * @throws ApplyConflict when the apply would change fields others own and {@code force} is false
     */
    static ObjectNode apply(
            ResourceType type,
            ObjectNode live,
            ObjectNode config,
            String manager,
            boolean force,
            String subresource,
            Instant now) {
        TypedFields typed = new TypedFields(type.schema());
        ObjectNode scopedConfig = scopedConfig(type, config, subresource);
        FieldSet applied = ManagedFields.scoped(type, typed.setOf(scopedConfig), subresource);
        List<ManagedFields.Entry> entries = ManagedFields.read(live);
        FieldSet last = FieldSet.EMPTY;
        FieldSet others = FieldSet.EMPTY;
        for (ManagedFields.Entry e : entries) {
            if (e.sameOwner(manager, ManagedFields.APPLY, subresource)) {
                last = e.fields();
            } else {
                others = others.union(e.fields());
            }
        }
        ObjectNode base = live == null ? config.objectNode() : live;
        ObjectNode merged = (ObjectNode) typed.merge(base, scopedConfig);
        FieldSet kept = applied.union(others);
        List<List<String>> dropped = new ArrayList<>();
        for (List<String> path : last.difference(kept).paths()) {
            if (!kept.hasMemberBelow(path)) {
                dropped.add(path);
            }
        }
        TypedFields.removeAll(merged, dropped);
        FieldSet changed = ManagedFields.scoped(type, typed.changed(live, merged), subresource);
        FieldSet removed = live == null ? FieldSet.EMPTY : typed.setOf(live).difference(typed.setOf(merged));
        Map<ManagedFields.Entry, FieldSet> conflicts = new LinkedHashMap<>();
        List<ManagedFields.Entry> next = new ArrayList<>();
        int at = -1;
        for (ManagedFields.Entry e : entries) {
            if (e.sameOwner(manager, ManagedFields.APPLY, subresource)) {
                at = next.size();
                next.add(e);
                continue;
            }
            FieldSet conflict = e.fields().intersection(changed);
            if (!conflict.isEmpty()) {
                conflicts.put(e, conflict);
            }
            next.add(e.withFields(e.fields().difference(conflict).difference(removed)));
        }
        if (!conflicts.isEmpty() && !force) {
            throw new ApplyConflict(type, conflicts);
        }
        boolean unchanged = live != null
                && TypedFields.trackable(live).equals(TypedFields.trackable(merged))
                && applied.equals(last);
        if (unchanged) {
            ManagedFields.write(merged, entries);
            return merged;
        }
        ManagedFields.Entry mine = new ManagedFields.Entry(
                manager, ManagedFields.APPLY, type.groupVersion(), ManagedFields.time(now), subresource, applied);
        if (at < 0) {
            next.add(mine);
        } else {
            next.set(at, mine);
        }
        next.removeIf(e -> e.fields().isEmpty());
        ManagedFields.write(merged, next);
        return merged;
    }

    /** What of {@code config} a write through {@code subresource} takes: status only there, all but status else. */
    private static ObjectNode scopedConfig(ResourceType type, ObjectNode config, String subresource) {
        ObjectNode out = config.deepCopy();
        if (!type.statusSubresource()) {
            return out;
        }
        if ("status".equals(subresource)) {
            out.retain("apiVersion", "kind", "metadata", "status");
            if (out.get("metadata") instanceof ObjectNode meta) {
                meta.retain("name", "namespace");
            }
        } else {
            out.remove("status");
        }
        return out;
    }

    /** A 409 naming each field and the manager that owns it, as the API server words it. */
    static final class ApplyConflict extends ApiFront.ApiError {

        final List<ObjectNode> causes;

        ApplyConflict(ResourceType type, Map<ManagedFields.Entry, FieldSet> conflicts) {
            this(describe(conflicts));
        }

        private ApplyConflict(Described d) {
            super(409, "Conflict", d.message());
            this.causes = d.causes();
        }

        private record Described(String message, List<ObjectNode> causes) {}

        private static Described describe(Map<ManagedFields.Entry, FieldSet> conflicts) {
            List<ObjectNode> causes = new ArrayList<>();
            List<String> lines = new ArrayList<>();
            for (Map.Entry<ManagedFields.Entry, FieldSet> c : conflicts.entrySet()) {
                String who = Json.quote(c.getKey().manager()) + " using "
                        + c.getKey().apiVersion();
                List<List<String>> paths = c.getValue().paths();
                lines.add(
                        paths.size() == 1
                                ? "conflict with " + who + ": " + FieldSet.pathText(paths.getFirst())
                                : "conflicts with " + who + ":");
                for (List<String> p : paths) {
                    String field = FieldSet.pathText(p);
                    if (paths.size() > 1) {
                        lines.add("- " + field);
                    }
                    ObjectNode cause = YAML.createObjectNode();
                    cause.put("type", "FieldManagerConflict")
                            .put("message", "conflict with " + who)
                            .put("field", field);
                    causes.add(cause);
                }
            }
            int n = causes.size();
            return new Described(
                    "Apply failed with " + n + " conflict" + (n == 1 ? "" : "s") + ": " + String.join("\n", lines),
                    causes);
        }
    }
}
