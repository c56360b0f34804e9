package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * What the registry does to an object before the {@link ObjectStore} keeps it, the part every resource's strategy
 * shares in a real API server: the metadata the server sets on a create (PrepareForCreate) and keeps on an update
 * (PrepareForUpdate), a name from generateName, the status a status subresource owns, generation counted on spec
 * changes, and the mark on an object deleted while finalizers hold it.
 */
final class RegistryStrategy {

    private static final String ALPHANUMERIC = "bcdfghjklmnpqrstvwxz2456789";

    private final Clock clock;
    private final SecureRandom random = new SecureRandom();

    RegistryStrategy(Clock clock) {
        this.clock = clock;
    }

    /**
     * Readies {@code object} to be created as {@code name}: the server sets uid, creationTimestamp and generation,
     * clears what only it sets later, and drops the status of a resource whose status is a subresource.
     */
    void prepareForCreate(ResourceType type, ObjectNode object, String name) {
        ObjectNode meta = object.withObjectProperty("metadata");
        meta.put("name", name);
        meta.put("uid", UUID.randomUUID().toString());
        meta.put("creationTimestamp", now());
        meta.put("generation", 1);
        meta.remove(List.of("deletionTimestamp", "deletionGracePeriodSeconds", "resourceVersion"));
        if (type.statusSubresource()) {
            object.remove("status");
        }
        if (type.equals(Catalog.SECRETS)) {
            SecretData.fold(object);
        }
        if (type.equals(Catalog.CRDS)) {
            object.set("status", CrdStatus.created(object, now()));
        }
    }

    /**
     * What an update may change, as the resource's strategy resets it before validation and admission (a real API
     * server's PrepareForUpdate): through the status subresource only status changes (and, for Nodes, metadata);
     * through the main resource the status of a status-subresource type never does; metadata the server owns
     * (name, uid, resourceVersion, generation, deletion) stays the old object's. The result may share parts of
     * {@code proposed}; preparing a prepared object changes nothing.
     */
    static ObjectNode prepareForUpdate(ResourceType type, ObjectNode old, ObjectNode proposed, boolean statusWrite) {
        ObjectNode next;
        if (statusWrite) {
            next = old.deepCopy();
            if (type.plural().equals("nodes") && type.group().isEmpty()) {
                next.set("metadata", proposed.path("metadata").deepCopy());
            }
            if (proposed.has("status")) {
                next.set("status", proposed.get("status"));
            } else {
                next.remove("status");
            }
            // who owns which fields changes with a status write too (the server records it: ManagedFields)
            JsonNode managed = proposed.path("metadata").get("managedFields");
            if (managed != null) {
                next.withObjectProperty("metadata").set("managedFields", managed);
            } else {
                next.withObjectProperty("metadata").remove("managedFields");
            }
        } else {
            next = proposed;
            if (type.equals(Catalog.CRDS)) {
                next.set("status", CrdStatus.updated(old.get("status"), next));
            } else if (type.statusSubresource()) {
                if (old.has("status")) {
                    next.set("status", old.get("status"));
                } else {
                    next.remove("status");
                }
            }
        }
        ObjectNode meta = next.withObjectProperty("metadata");
        ObjectNode oldMeta = (ObjectNode) old.get("metadata");
        for (String kept : List.of(
                "name",
                "namespace",
                "uid",
                "creationTimestamp",
                "generation",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "resourceVersion")) {
            if (oldMeta.has(kept)) {
                meta.set(kept, oldMeta.get(kept));
            } else {
                meta.remove(kept);
            }
        }
        return next;
    }

    /** The object without metadata and status: what generation counts changes of. */
    static JsonNode specOf(ObjectNode object) {
        ObjectNode rest = object.objectNode();
        for (Map.Entry<String, JsonNode> f : object.properties()) {
            if (!f.getKey().equals("metadata") && !f.getKey().equals("status")) {
                rest.set(f.getKey(), f.getValue());
            }
        }
        return rest;
    }

    /** A copy of {@code old} marked as being deleted now: deletionTimestamp, no grace period, a new generation. */
    ObjectNode markedForDeletion(ObjectNode old) {
        ObjectNode meta = (ObjectNode) old.get("metadata");
        ObjectNode marked = old.deepCopy();
        marked.withObjectProperty("metadata")
                .put("deletionTimestamp", now())
                .put("deletionGracePeriodSeconds", 0)
                .put("generation", meta.path("generation").asLong(0) + 1);
        return marked;
    }

    private String now() {
        return Instant.now(clock).truncatedTo(ChronoUnit.SECONDS).toString();
    }

    /** Five random characters a generateName is completed with, from the alphabet the real server draws from. */
    String suffix() {
        StringBuilder s = new StringBuilder(5);
        for (int i = 0; i < 5; i++) {
            s.append(ALPHANUMERIC.charAt(random.nextInt(ALPHANUMERIC.length())));
        }
        return s.toString();
    }
}
