package dev.drover.controller;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationStatus;
import dev.drover.controller.status.StatusWriter;
import dev.drover.state.AllocId;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.client.informers.cache.BasicItemStore;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.fabric8.kubernetes.client.informers.cache.ItemStore;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.stream.Stream;

/**
 * The informer's cache of this node's allocations, without what the agent never reads: each allocation's
 * {@code metadata.managedFields} (the API server's record of which client set which field, some kilobytes of nested
 * maps per allocation) and kubectl's {@code last-applied-configuration} annotation (a whole copy of the object as
 * applied). Both are dropped as an allocation enters the cache, so the reconciler, its event handlers and every copy
 * made from the cache never hold them. The agent writes an allocation only by patches naming what they change, never
 * by sending back a cached object, so nothing it writes loses them on the server.
 *
 * <p>An allocation's status, as the watch sends back what the agent wrote, is most often equal to the one the status
 * writer holds: the cache keeps the writer's instead of a second copy ({@link StatusWriter#sameAs}).
 */
final class CachedAllocations implements ItemStore<Allocation> {

    /** The annotation {@code kubectl apply} keeps a whole copy of the object in. */
    static final String LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

    private final BasicItemStore<Allocation> store = new BasicItemStore<>(Cache::metaNamespaceKeyFunc);
    private final BiFunction<AllocId, AllocationStatus, AllocationStatus> knownStatus;

    /** @param knownStatus an equal status already held for the allocation, or the one given ({@link StatusWriter#sameAs}) */
    CachedAllocations(BiFunction<AllocId, AllocationStatus, AllocationStatus> knownStatus) {
        this.knownStatus = knownStatus;
    }

    @Override
    public String getKey(Allocation a) {
        return store.getKey(a);
    }

    @Override
    public Allocation put(String key, Allocation a) {
        Allocation slim = pruned(a);
        AllocationStatus status = slim.getStatus();
        AllocId id = status == null ? null : idOf(slim);
        if (id != null) {
            AllocationStatus known = knownStatus.apply(id, status);
            if (known != status) {
                slim.setStatus(known);
            }
        }
        return store.put(key, slim);
    }

    /**
     * {@code a}'s id, or null for a name no allocation here can have (an API server that does not check names): the
     * reconciler ignores it, and the watch must not fail on it here.
     */
    private static AllocId idOf(Allocation a) {
        ObjectMeta m = a.getMetadata();
        if (m == null) {
            return null;
        }
        try {
            return new AllocId(m.getNamespace(), m.getName());
        } catch (IllegalArgumentException unusable) {
            return null;
        }
    }

    @Override
    public Allocation remove(String key) {
        return store.remove(key);
    }

    @Override
    public Stream<String> keySet() {
        return store.keySet();
    }

    @Override
    public Stream<Allocation> values() {
        return store.values();
    }

    @Override
    public int size() {
        return store.size();
    }

    @Override
    public Allocation get(String key) {
        return store.get(key);
    }

    /** {@code a} itself, less its managed fields and last-applied annotation. */
    static Allocation pruned(Allocation a) {
        ObjectMeta m = a.getMetadata();
        if (m == null) {
            return a;
        }
        m.setManagedFields(null);
        Map<String, String> annotations = m.getAnnotations();
        if (annotations != null && annotations.containsKey(LAST_APPLIED)) {
            Map<String, String> rest = new LinkedHashMap<>(annotations);
            rest.remove(LAST_APPLIED);
            m.setAnnotations(rest.isEmpty() ? null : rest);
        }
        return a;
    }
}
