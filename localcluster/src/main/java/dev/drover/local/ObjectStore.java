package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

/**
 * The local API server's objects, with the registry rules a real API server
 * applies to them: one revision counter for every change (etcd's), server-set
 * metadata, generation counted on spec changes, the status subresource,
 * finalizers before deletion, optimistic concurrency on resourceVersion, and
 * a window of recent changes that watches start from without a gap, and the
 * deletion of dependents whose owners are gone ({@link Dependents}). What the
 * registry does to an object before it is kept is {@link RegistryStrategy}'s; the
 * window of changes and the watches it feeds are {@link ChangeHistory}'s.
 *
 * <p>Objects are kept per resource type by {@code namespace/name}, so a read or
 * write costs one map lookup whatever the store holds. Stored trees are never
 * changed in place: a write stores a new tree, so readers may keep and serialize
 * what they were given without the lock.
 */
final class ObjectStore {

    /** Changes kept by default for watches that resume from a resourceVersion; older ones get 410 Gone. */
    static final int HISTORY = 100_000;
    /** Changes a watcher may fall behind by before its watch is ended (it lists again, as with a real server). */
    static final int WATCHER_BACKLOG = 200_000;

    /**
     * One change: the object as stored after it (for DELETED, its last state at the deletion's revision);
     * {@code previous}: the object before a MODIFIED change (a watch with selectors needs it), else null.
     */
    record Change(long revision, String typeKey, String type, ObjectNode object, ObjectNode previous) {}

    /** The type of the change that ends a watch's initial events ({@code sendInitialEvents}). */
    static final String INITIAL_EVENTS_END = "INITIAL_EVENTS_END";

    /** A registered watch: changes of one type (and namespace, when given) arrive in revision order. */
    final class Watch implements AutoCloseable {
        private final String typeKey;
        private final String namespace;
        /** Further types this watch gets the changes of (an in-process watcher of several types). */
        private final java.util.Set<String> alsoTypeKeys;

        private final BlockingQueue<Change> queue = new LinkedBlockingQueue<>();
        private volatile boolean overflowed;

        private Watch(String typeKey, String namespace) {
            this(typeKey, namespace, java.util.Set.of());
        }

        private Watch(String typeKey, String namespace, java.util.Set<String> alsoTypeKeys) {
            this.typeKey = typeKey;
            this.namespace = namespace;
            this.alsoTypeKeys = alsoTypeKeys;
        }

        /** The next change, null when none came within the wait. */
        Change poll(long millis) throws InterruptedException {
            return queue.poll(millis, TimeUnit.MILLISECONDS);
        }

        /** Changes waiting to be sent. */
        int pending() {
            return queue.size();
        }

        /** Whether the watcher fell too far behind; the stream should end so that the client lists again. */
        boolean overflowed() {
            return overflowed;
        }

        void offer(Change change) {
            if (queue.size() >= WATCHER_BACKLOG) {
                overflowed = true;
                return;
            }
            queue.add(change);
        }

        boolean wants(Change change) {
            return (change.typeKey().equals(typeKey) || alsoTypeKeys.contains(change.typeKey()))
                    && (namespace == null
                            || namespace.equals(change.object()
                                    .path("metadata")
                                    .path("namespace")
                                    .asText()));
        }

        @Override
        public void close() {
            changes.unregister(this);
        }
    }

    /** A list: the items and the revision they were read at. */
    record Listing(List<ObjectNode> items, long revision) {}

    /** etcd's default {@code --max-request-bytes} (1.5 MiB): no stored object is larger. */
    static final int MAX_OBJECT_BYTES = 1_572_864;

    private static final com.fasterxml.jackson.databind.ObjectMapper SIZES = NestingDepth.mapper();

    private final RegistryStrategy strategy;
    private final ChangeHistory changes;
    private final Map<String, TreeMap<String, ObjectNode>> objects = new HashMap<>();
    private long revision;
    private final Dependents dependents = new Dependents();

    ObjectStore(Clock clock) {
        this(clock, HISTORY);
    }

    ObjectStore(Clock clock, int historySize) {
        this.strategy = new RegistryStrategy(clock);
        this.changes = new ChangeHistory(historySize);
    }

    /** The key objects of a type are kept under: versions of one resource share their objects. */
    static String typeKey(ResourceType type) {
        return type.group() + "/" + type.plural();
    }

    synchronized long revision() {
        return revision;
    }

    synchronized ObjectNode get(ResourceType type, String namespace, String name) {
        ObjectNode found = bucket(type).get(key(type, namespace, name));
        if (found == null) {
            throw notFound(type, name);
        }
        return found;
    }

    synchronized boolean exists(ResourceType type, String namespace, String name) {
        return bucket(type).containsKey(key(type, namespace, name));
    }

    /** Every object of the type, in {@code namespace} or, when null, in all namespaces, by namespace and name. */
    synchronized Listing list(ResourceType type, String namespace) {
        TreeMap<String, ObjectNode> all = bucket(type);
        List<ObjectNode> items = new ArrayList<>();
        if (namespace == null || !type.namespaced()) {
            items.addAll(all.values());
        } else {
            items.addAll(all.subMap(namespace + "/", namespace + "0").values()); // '0' sorts right after '/'
        }
        return new Listing(items, revision);
    }

    /**
     * Stores a new object. The server sets uid, creationTimestamp, resourceVersion and generation, makes a name
     * from generateName, and drops the status of a resource whose status is a subresource.
     */
    synchronized ObjectNode create(ResourceType type, String namespace, ObjectNode object, boolean dryRun) {
        ObjectNode meta = object.withObjectProperty("metadata");
        if (type.namespaced()) {
            if (namespace == null) {
                throw new ApiFront.ApiError(400, "BadRequest", "the namespace of the object must be given");
            }
            String stated = meta.path("namespace").asText("");
            if (!stated.isEmpty() && !stated.equals(namespace)) {
                throw new ApiFront.ApiError(
                        400,
                        "BadRequest",
                        "the namespace of the provided object (" + stated
                                + ") does not match the namespace sent on the request (" + namespace + ")");
            }
            if (!bucket(Catalog.NAMESPACES).containsKey(key(Catalog.NAMESPACES, null, namespace))) {
                throw notFound(Catalog.NAMESPACES, namespace);
            }
            meta.put("namespace", namespace);
        } else {
            meta.remove("namespace");
        }
        String name = meta.path("name").asText("");
        if (name.isEmpty() && !meta.path("generateName").asText("").isEmpty()) {
            do {
                name = meta.path("generateName").asText() + strategy.suffix();
            } while (bucket(type).containsKey(key(type, namespace, name)));
        }
        if (name.isEmpty()) {
            throw new ApiFront.ApiError(
                    422,
                    "Invalid",
                    type.kind() + " is invalid: metadata.name: Required value:" + " name or generateName is required");
        }
        List<String> badName = ObjectNames.problems(type, name);
        if (!badName.isEmpty()) {
            throw ObjectNames.invalid(type, name, badName);
        }
        String key = key(type, namespace, name);
        if (bucket(type).containsKey(key)) {
            throw new ApiFront.ApiError(
                    409, "AlreadyExists", type.plural() + qualifier(type) + " \"" + name + "\" already exists");
        }
        strategy.prepareForCreate(type, object, name);
        if (dryRun) {
            return stamped(object, revision + 1);
        }
        return commit(type, key, "ADDED", object);
    }

    /**
     * Changes a stored object: {@code change} gets the stored tree (a copy to change or replace) and returns
     * the new one. A resourceVersion in the result that is not the stored one is a conflict. Through the status
     * subresource only status changes (and, for Nodes, metadata, as the node status strategy allows); through
     * the main resource the status of a status-subresource type never does. An object being deleted whose
     * last finalizer goes is removed.
     */
    synchronized ObjectNode update(
            ResourceType type,
            String namespace,
            String name,
            boolean statusWrite,
            UnaryOperator<ObjectNode> change,
            boolean dryRun) {
        String key = key(type, namespace, name);
        ObjectNode old = bucket(type).get(key);
        if (old == null) {
            throw notFound(type, name);
        }
        ObjectNode proposed = change.apply(old.deepCopy());
        String rv = proposed.path("metadata").path("resourceVersion").asText("");
        if (!rv.isEmpty()
                && !rv.equals(old.path("metadata").path("resourceVersion").asText())) {
            throw new ApiFront.ApiError(
                    409,
                    "Conflict",
                    "Operation cannot be fulfilled on " + type.plural()
                            + qualifier(type) + " \"" + name
                            + "\": the object has been modified; please apply your changes"
                            + " to the latest version and try again");
        }
        ObjectNode next = RegistryStrategy.prepareForUpdate(type, old, proposed, statusWrite);
        if (type.equals(Catalog.SECRETS)) {
            SecretData.fold(next);
        }
        ObjectNode meta = next.withObjectProperty("metadata");
        ObjectNode oldMeta = (ObjectNode) old.get("metadata");
        if (next.equals(old)) {
            return old; // as a real API server: a write that changes nothing is no change, and no event
        }
        if (!RegistryStrategy.specOf(next).equals(RegistryStrategy.specOf(old))) {
            meta.put("generation", oldMeta.path("generation").asLong(0) + 1);
        }
        if (oldMeta.has("deletionTimestamp") && meta.path("finalizers").isEmpty()) {
            if (dryRun) {
                return stamped(next, revision + 1);
            }
            return remove(type, key, next);
        }
        if (dryRun) {
            return stamped(next, revision + 1);
        }
        return commit(type, key, "MODIFIED", next);
    }

    /**
     * Deletes an object: one with finalizers is marked (deletionTimestamp, a generation) and stays until they
     * are gone; one without is removed. Deleting a namespace deletes what it holds the same way.
     */
    synchronized ObjectNode delete(ResourceType type, String namespace, String name, boolean dryRun) {
        String key = key(type, namespace, name);
        ObjectNode old = bucket(type).get(key);
        if (old == null) {
            throw notFound(type, name);
        }
        if (dryRun) {
            return old;
        }
        if (type.equals(Catalog.NAMESPACES)) {
            for (Map.Entry<String, TreeMap<String, ObjectNode>> bucket : new ArrayList<>(objects.entrySet())) {
                for (ObjectNode held : new ArrayList<>(
                        bucket.getValue().subMap(name + "/", name + "0").values())) {
                    // as it is now: deleting another may have deleted or marked it (its owner's garbage collection)
                    ObjectNode current = bucket.getValue().get(key(held));
                    if (current != null) {
                        deleteOne(bucket.getKey(), key(held), current);
                    }
                }
            }
        }
        return deleteOne(typeKey(type), key, old);
    }

    private ObjectNode deleteOne(String typeKey, String key, ObjectNode old) {
        ObjectNode meta = (ObjectNode) old.get("metadata");
        if (meta.path("finalizers").isEmpty()) {
            return remove(typeKey, key, old);
        }
        if (meta.has("deletionTimestamp")) {
            return old;
        }
        return commit(typeKey, key, "MODIFIED", strategy.markedForDeletion(old));
    }

    /**
     * A watch from {@code since}: the changes after it, then every new one. With {@code since} below zero it
     * starts with the current objects as ADDED, as a watch without a resourceVersion does. A version older than
     * the kept history is refused with 410 Gone, and the client lists again.
     */
    synchronized Watch watch(ResourceType type, String namespace, long since) {
        return watch(type, namespace, since, false);
    }

    /**
     * As {@link #watch(ResourceType, String, long)}; with {@code initialEventsEnd} the current objects are followed
     * by a change of type {@link #INITIAL_EVENTS_END}, with no object, at the revision they were read at.
     */
    synchronized Watch watch(ResourceType type, String namespace, long since, boolean initialEventsEnd) {
        Watch w = new Watch(typeKey(type), type.namespaced() ? namespace : null);
        if (since < 0) {
            for (ObjectNode o : list(type, namespace).items()) {
                w.offer(new Change(revision, w.typeKey, "ADDED", o, null));
            }
            if (initialEventsEnd) {
                w.offer(new Change(revision, w.typeKey, INITIAL_EVENTS_END, null, null));
            }
        } else {
            changes.replay(w, since);
        }
        changes.register(w);
        return w;
    }

    /**
     * A watch of every change to objects of {@code types}, in all namespaces, from now on: for a watcher in this
     * process (the kubelet stand-in), which reads the current objects itself.
     */
    synchronized Watch watchFromNow(List<ResourceType> types) {
        java.util.Set<String> keys = new java.util.HashSet<>();
        types.forEach(t -> keys.add(typeKey(t)));
        Watch w = new Watch(typeKey(types.getFirst()), null, java.util.Set.copyOf(keys));
        changes.register(w);
        return w;
    }

    private ObjectNode remove(ResourceType type, String key, ObjectNode last) {
        return remove(typeKey(type), key, last);
    }

    private ObjectNode remove(String typeKey, String key, ObjectNode last) {
        ObjectNode stored = objects.get(typeKey).remove(key);
        ObjectNode gone = stamped(last.deepCopy(), ++revision); // the stored tree may be in readers' hands
        changes.record(new Change(revision, typeKey, "DELETED", gone, null), sizeOf(gone));
        collect(dependents.removed(new Dependents.Ref(typeKey, key), stored == null ? last : stored));
        return gone;
    }

    /** Deletes the dependents of a removed object whose owners are all gone (their own dependents follow). */
    private void collect(List<Dependents.Ref> orphans) {
        for (Dependents.Ref ref : orphans) {
            TreeMap<String, ObjectNode> bucket = objects.get(ref.typeKey());
            ObjectNode dependent = bucket == null ? null : bucket.get(ref.key());
            if (dependent != null && dependents.orphaned(dependent)) {
                deleteOne(ref.typeKey(), ref.key(), dependent);
            }
        }
    }

    private ObjectNode commit(ResourceType type, String key, String event, ObjectNode object) {
        return commit(typeKey(type), key, event, object);
    }

    private ObjectNode commit(String typeKey, String key, String event, ObjectNode object) {
        int size = sizeOf(object);
        if (size > MAX_OBJECT_BYTES) {
            // what etcd answers for a value over its --max-request-bytes, and the API server passes on as a 500
            throw new ApiFront.ApiError(500, "InternalError", "etcdserver: request is too large");
        }
        ObjectNode stored = stamped(object, ++revision);
        ObjectNode previous =
                objects.computeIfAbsent(typeKey, k -> new TreeMap<>()).put(key, stored);
        dependents.stored(new Dependents.Ref(typeKey, key), previous, stored);
        changes.record(new Change(revision, typeKey, event, stored, "MODIFIED".equals(event) ? previous : null), size);
        return stored;
    }

    private static int sizeOf(ObjectNode object) {
        try {
            return SIZES.writeValueAsBytes(object).length;
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException("cannot serialize a stored object", e);
        }
    }

    private static ObjectNode stamped(ObjectNode object, long rv) {
        object.withObjectProperty("metadata").put("resourceVersion", Long.toString(rv));
        return object;
    }

    private TreeMap<String, ObjectNode> bucket(ResourceType type) {
        return objects.computeIfAbsent(typeKey(type), k -> new TreeMap<>());
    }

    private static String key(ResourceType type, String namespace, String name) {
        return (type.namespaced() ? namespace : "") + "/" + name;
    }

    private static String key(ObjectNode object) {
        JsonNode meta = object.path("metadata");
        return meta.path("namespace").asText("") + "/" + meta.path("name").asText();
    }

    private static String qualifier(ResourceType type) {
        return type.group().isEmpty() ? "" : "." + type.group();
    }

    static ApiFront.ApiError notFound(ResourceType type, String name) {
        return new ApiFront.ApiError(404, "NotFound", type.plural() + qualifier(type) + " \"" + name + "\" not found");
    }
}
