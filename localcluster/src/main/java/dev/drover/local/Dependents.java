package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The part of Kubernetes' garbage collector Drover relies on: when an object is removed, its dependents (objects
 * whose {@code metadata.ownerReferences} name its uid) whose owners are all gone are deleted too, as the collector
 * does with background propagation: the agent's EndpointSlices go with the Service that owns them. Here it happens
 * at once, in the same call, where a real collector gets to it within seconds. Not emulated: foreground deletion
 * ({@code propagationPolicy}, {@code blockOwnerDeletion}, the {@code foregroundDeletion} finalizer), orphaning, and
 * removing the reference to a gone owner from a dependent that has another owner left (it keeps both references).
 *
 * <p>An index kept by {@link ObjectStore} under its lock: the uid of every stored object, and for each uid the
 * objects that name it as an owner, so a removal costs its dependents, not a scan of the store.
 */
final class Dependents {

    /** A stored object: its type's key and its {@code namespace/name} key. */
    record Ref(String typeKey, String key) {}

    private final Map<String, Ref> byUid = new HashMap<>();
    private final Map<String, Set<Ref>> dependents = new HashMap<>();

    /** {@code ref} is now stored as {@code now}, where it was {@code before} (null when new). */
    void stored(Ref ref, ObjectNode before, ObjectNode now) {
        if (before != null) {
            forget(ref, before);
        }
        String uid = uid(now);
        if (!uid.isEmpty()) {
            byUid.put(uid, ref);
        }
        for (String owner : owners(now)) {
            dependents.computeIfAbsent(owner, k -> new LinkedHashSet<>()).add(ref);
        }
    }

    /**
     * {@code ref}, last stored as {@code last}, is removed; answers its dependents whose owners are now all gone,
     * which the store deletes in turn.
     */
    List<Ref> removed(Ref ref, ObjectNode last) {
        forget(ref, last);
        Set<Ref> held = dependents.remove(uid(last));
        return held == null ? List.of() : new ArrayList<>(held);
    }

    /** Whether every owner {@code object} names is gone. */
    boolean orphaned(ObjectNode object) {
        return owners(object).stream().noneMatch(byUid::containsKey);
    }

    private void forget(Ref ref, ObjectNode object) {
        String uid = uid(object);
        if (ref.equals(byUid.get(uid))) {
            byUid.remove(uid);
        }
        for (String owner : owners(object)) {
            Set<Ref> refs = dependents.get(owner);
            if (refs != null) {
                refs.remove(ref);
                if (refs.isEmpty()) {
                    dependents.remove(owner);
                }
            }
        }
    }

    private static String uid(JsonNode object) {
        return object.path("metadata").path("uid").asText("");
    }

    private static List<String> owners(JsonNode object) {
        List<String> uids = new ArrayList<>();
        for (JsonNode ref : object.path("metadata").path("ownerReferences")) {
            String uid = ref.path("uid").asText("");
            if (!uid.isEmpty()) {
                uids.add(uid);
            }
        }
        return uids;
    }
}
