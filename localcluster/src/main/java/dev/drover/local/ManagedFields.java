package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * {@code metadata.managedFields}: which field manager owns which fields of an object, one entry per manager,
 * operation ({@code Apply} or {@code Update}) and subresource. An ordinary write records its manager as an
 * {@code Update} owning the fields it changed, taken from whoever owned them; {@link ServerSideApply} records
 * {@code Apply} entries. As with the API server's status strategies, a write through the main resource of a type with
 * a status subresource owns nothing under {@code status}, and a write through {@code /status} nothing else.
 */
final class ManagedFields {

    static final String APPLY = "Apply";
    static final String UPDATE = "Update";

    /** As the API server: past this many Update entries the oldest are folded into one, so writers cannot grow it. */
    static final int MAX_UPDATE_ENTRIES = 10;

    static final String ANCIENT_CHANGES = "ancient-changes";

    /** One manager's entry. */
    record Entry(
            String manager, String operation, String apiVersion, String time, String subresource, FieldSet fields) {

        boolean sameOwner(String manager, String operation, String subresource) {
            return this.manager.equals(manager)
                    && this.operation.equals(operation)
                    && Objects.equals(this.subresource, subresource);
        }

        Entry withFields(FieldSet fields) {
            return new Entry(manager, operation, apiVersion, time, subresource, fields);
        }

        ObjectNode toJson(ObjectNode out) {
            out.put("manager", manager).put("operation", operation).put("apiVersion", apiVersion);
            out.put("time", time).put("fieldsType", "FieldsV1");
            out.set("fieldsV1", fields.toFieldsV1());
            if (subresource != null) {
                out.put("subresource", subresource);
            }
            return out;
        }
    }

    private ManagedFields() {}

    /** The entries of {@code object}; one that is not well formed is dropped, as the server resets bad ones. */
    static List<Entry> read(JsonNode object) {
        List<Entry> out = new ArrayList<>();
        if (object == null) {
            return out;
        }
        for (JsonNode e : object.path("metadata").path("managedFields")) {
            String manager = e.path("manager").asText("");
            String operation = e.path("operation").asText("");
            if (manager.isEmpty()
                    || !(operation.equals(APPLY) || operation.equals(UPDATE))
                    || !"FieldsV1".equals(e.path("fieldsType").asText())) {
                continue;
            }
            try {
                out.add(new Entry(
                        manager,
                        operation,
                        e.path("apiVersion").asText(""),
                        e.path("time").asText(""),
                        e.hasNonNull("subresource") ? e.get("subresource").asText() : null,
                        FieldSet.fromFieldsV1(e.path("fieldsV1"))));
            } catch (IllegalArgumentException bad) {
                // dropped
            }
        }
        return out;
    }

    /** Sets {@code object}'s managedFields to {@code entries} (none: the field goes). */
    static void write(ObjectNode object, List<Entry> entries) {
        ObjectNode meta = object.withObjectProperty("metadata");
        if (entries.isEmpty()) {
            meta.remove("managedFields");
            return;
        }
        ArrayNode list = meta.putArray("managedFields");
        entries.forEach(e -> e.toJson(list.addObject()));
    }

    /** The part of {@code fields} a write through {@code subresource} (null: the main resource) may own. */
    static FieldSet scoped(ResourceType type, FieldSet fields, String subresource) {
        if (!type.statusSubresource()) {
            return fields;
        }
        return "status".equals(subresource) ? fields.only("f:status") : fields.without("f:status");
    }

    /** The time of an entry written at {@code now}: seconds, as the API server keeps it. */
    static String time(Instant now) {
        return now.truncatedTo(ChronoUnit.SECONDS).toString();
    }

    /**
     * {@code after} with the managedFields an ordinary write by {@code manager} leaves: its {@code Update} entry owns
     * what it added or changed, and keeps what it owned and did not remove; nobody else owns what it changed, and
     * nobody owns what it removed. A write that changes nothing keeps the entries as they were.
     */
    static ObjectNode recordUpdate(
            ResourceType type, ObjectNode before, ObjectNode after, String manager, String subresource, Instant now) {
        List<Entry> entries = read(before);
        if (before != null && TypedFields.trackable(before).equals(TypedFields.trackable(after))) {
            write(after, entries);
            return after;
        }
        TypedFields typed = new TypedFields(type.schema());
        FieldSet changed = scoped(type, typed.changed(before, after), subresource);
        FieldSet removed = before == null ? FieldSet.EMPTY : typed.setOf(before).difference(typed.setOf(after));
        FieldSet own = FieldSet.EMPTY;
        List<Entry> next = new ArrayList<>();
        int at = -1;
        for (Entry e : entries) {
            if (e.sameOwner(manager, UPDATE, subresource)) {
                own = e.fields();
                at = next.size();
                next.add(e);
            } else {
                next.add(e.withFields(e.fields().difference(changed).difference(removed)));
            }
        }
        Entry mine = new Entry(
                manager,
                UPDATE,
                type.groupVersion(),
                time(now),
                subresource,
                own.difference(removed).union(changed));
        if (at < 0) {
            next.add(mine);
        } else {
            next.set(at, mine);
        }
        next.removeIf(e -> e.fields().isEmpty());
        write(after, capped(next));
        return after;
    }

    /** {@code entries} with the oldest Update entries folded into {@code ancient-changes} past the cap. */
    static List<Entry> capped(List<Entry> entries) {
        List<Entry> out = new ArrayList<>(entries);
        while (out.stream().filter(e -> e.operation().equals(UPDATE)).count() > MAX_UPDATE_ENTRIES) {
            Entry oldest = out.stream()
                    .filter(e -> e.operation().equals(UPDATE) && !e.manager().equals(ANCIENT_CHANGES))
                    .min(java.util.Comparator.comparing(Entry::time))
                    .orElseThrow();
            out.remove(oldest);
            int at = -1;
            for (int i = 0; i < out.size(); i++) {
                if (out.get(i).sameOwner(ANCIENT_CHANGES, UPDATE, null)) {
                    at = i;
                }
            }
            if (at < 0) {
                out.add(
                        0,
                        new Entry(ANCIENT_CHANGES, UPDATE, oldest.apiVersion(), oldest.time(), null, oldest.fields()));
            } else {
                out.set(at, out.get(at).withFields(out.get(at).fields().union(oldest.fields())));
            }
        }
        return out;
    }
}
