package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The status a real control plane gives a CustomResourceDefinition: the strategy records the storage version in
 * {@code storedVersions} (and adds a new one on update), and the naming and establishing controllers accept its names
 * and mark it {@code NamesAccepted} and {@code Established}. Here that happens as the CRD is written, since its
 * resources are served at once; tools that wait for {@code Established} (Helm, {@code kubectl wait}) see it.
 */
final class CrdStatus {

    private CrdStatus() {}

    /** The status of a CRD created at {@code now}. */
    static ObjectNode created(ObjectNode crd, String now) {
        ObjectNode status = crd.objectNode();
        status.set("acceptedNames", acceptedNames(crd));
        ArrayNode conditions = status.putArray("conditions");
        conditions.add(condition(crd, "NamesAccepted", "NoConflicts", "no conflicts found", now));
        conditions.add(
                condition(crd, "Established", "InitialNamesAccepted", "the initial names have been accepted", now));
        ArrayNode stored = status.putArray("storedVersions");
        String storage = storageVersion(crd);
        if (storage != null) {
            stored.add(storage);
        }
        return status;
    }

    /** The status of {@code next}, an update of a CRD whose status was {@code old}: names accepted, versions kept. */
    static ObjectNode updated(JsonNode old, ObjectNode next) {
        ObjectNode status = old != null && old.isObject() ? ((ObjectNode) old).deepCopy() : next.objectNode();
        status.set("acceptedNames", acceptedNames(next));
        ArrayNode stored = status.withArrayProperty("storedVersions");
        String storage = storageVersion(next);
        boolean known = false;
        for (JsonNode v : stored) {
            known |= v.asText().equals(storage);
        }
        if (storage != null && !known) {
            stored.add(storage);
        }
        return status;
    }

    private static ObjectNode acceptedNames(ObjectNode crd) {
        ObjectNode names = crd.path("spec").path("names").isObject()
                ? ((ObjectNode) crd.path("spec").path("names")).deepCopy()
                : crd.objectNode();
        String kind = names.path("kind").asText("");
        if (!names.hasNonNull("singular") || names.path("singular").asText().isEmpty()) {
            names.put("singular", kind.toLowerCase(java.util.Locale.ROOT));
        }
        if (!names.hasNonNull("listKind") || names.path("listKind").asText().isEmpty()) {
            names.put("listKind", kind + "List");
        }
        return names;
    }

    private static ObjectNode condition(ObjectNode crd, String type, String reason, String message, String now) {
        return crd.objectNode()
                .put("type", type)
                .put("status", "True")
                .put("lastTransitionTime", now)
                .put("reason", reason)
                .put("message", message);
    }

    private static String storageVersion(ObjectNode crd) {
        for (JsonNode v : crd.path("spec").path("versions")) {
            if (v.path("storage").asBoolean(false)) {
                return v.path("name").asText();
            }
        }
        return null;
    }
}
