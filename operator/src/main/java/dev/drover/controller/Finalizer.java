package dev.drover.controller;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.kube.RawWrites;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.List;

/**
 * Drover's finalizer on an Allocation, added and removed by the agent with one small JSON patch each: no read before
 * it, no copy of the allocation and no diff (what JOSDK's own finalizer handling costs), and the answer is not
 * parsed. Each patch first tests what it assumes, so a writer that changed the finalizers meanwhile is never
 * overwritten: the test fails, the allocation is read again and the patch tried once more, and a second failure is
 * left to the next reconcile (the watch brings the change that made it fail).
 */
public final class Finalizer {

    public static final String NAME = "drover.dev/finalizer";

    /** The API server as the finalizer needs it. */
    public interface Api {
        /** Sends a JSON patch to the allocation; a refusal throws with its HTTP code. */
        void patch(String namespace, String name, String jsonPatch);

        /** The allocation as the API server has it now; null when it is gone. */
        Allocation read(String namespace, String name);
    }

    private final Api api;

    public Finalizer(Api api) {
        this.api = api;
    }

    public static Finalizer of(KubernetesClient client) {
        RawWrites raw = new RawWrites(client);
        String plural = "/" + HasMetadata.getPlural(Allocation.class) + "/";
        String base = "/apis/" + HasMetadata.getApiVersion(Allocation.class) + "/namespaces/";
        return new Finalizer(new Api() {
            @Override
            public void patch(String namespace, String name, String jsonPatch) {
                raw.send(
                        "PATCH",
                        base + RawWrites.named("namespace", namespace) + plural + RawWrites.named("name", name),
                        "application/json-patch+json",
                        jsonPatch);
            }

            @Override
            public Allocation read(String namespace, String name) {
                return client.resources(Allocation.class)
                        .inNamespace(namespace)
                        .withName(name)
                        .get();
            }
        });
    }

    /**
     * Adds the finalizer to {@code a} unless it has it or is being deleted. Returns false when the allocation is
     * gone (nothing to run); a write that still fails after one more try throws.
     */
    boolean add(Allocation a) {
        Allocation seen = a;
        for (int attempt = 0; ; attempt++) {
            String patch = addPatch(seen);
            if (patch == null) {
                return true;
            }
            try {
                api.patch(seen.getMetadata().getNamespace(), seen.getMetadata().getName(), patch);
                return true;
            } catch (KubernetesClientException e) {
                if (e.getCode() == 404) {
                    return false;
                }
                if (!changedMeanwhile(e) || attempt > 0) {
                    throw e;
                }
            }
            seen = api.read(a.getMetadata().getNamespace(), a.getMetadata().getName());
            if (seen == null) {
                return false;
            }
        }
    }

    /**
     * Removes the finalizer from {@code a}. Returns whether it is gone (removed now, or not there); false when it
     * changed twice under the patch: the next reconcile tries again.
     */
    boolean remove(Allocation a) {
        Allocation seen = a;
        for (int attempt = 0; attempt < 2; attempt++) {
            String patch = removePatch(seen);
            if (patch == null) {
                return true;
            }
            try {
                api.patch(seen.getMetadata().getNamespace(), seen.getMetadata().getName(), patch);
                return true;
            } catch (KubernetesClientException e) {
                if (e.getCode() == 404) {
                    return true;
                }
                if (!changedMeanwhile(e)) {
                    throw e;
                }
            }
            if (attempt == 0) {
                seen = api.read(a.getMetadata().getNamespace(), a.getMetadata().getName());
                if (seen == null) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * The patch that adds the finalizer, tested against what {@code a} had: with no finalizers, that its resource
     * version is still the one seen (an absent list cannot be tested for, and an {@code add} of the whole list would
     * replace one written meanwhile); with some, that the list is still exactly that. Null when there is nothing to
     * add: it has the finalizer, or it is being deleted (a delete is never held up by a finalizer added late).
     */
    static String addPatch(Allocation a) {
        ObjectMeta meta = a.getMetadata();
        List<String> finalizers = finalizers(a);
        if (meta.getDeletionTimestamp() != null || finalizers.contains(NAME)) {
            return null;
        }
        ArrayNode patch = JsonNodeFactory.instance.arrayNode();
        if (finalizers.isEmpty()) {
            patch.add(op("test", "/metadata/resourceVersion").put("value", meta.getResourceVersion()));
            patch.add(op("add", "/metadata/finalizers")
                    .set("value", JsonNodeFactory.instance.arrayNode().add(NAME)));
        } else {
            ArrayNode was = JsonNodeFactory.instance.arrayNode();
            finalizers.forEach(was::add);
            patch.add(op("test", "/metadata/finalizers").set("value", was));
            patch.add(op("add", "/metadata/finalizers/-").put("value", NAME));
        }
        return patch.toString();
    }

    /**
     * The patch that removes the finalizer at the index {@code a} has it, guarded by a test that the entry there is
     * still ours (another writer may have removed one before it). Null when it has none.
     */
    static String removePatch(Allocation a) {
        int at = finalizers(a).indexOf(NAME);
        if (at < 0) {
            return null;
        }
        String path = "/metadata/finalizers/" + at;
        ArrayNode patch = JsonNodeFactory.instance.arrayNode();
        patch.add(op("test", path).put("value", NAME));
        patch.add(op("remove", path));
        return patch.toString();
    }

    static boolean has(Allocation a) {
        return finalizers(a).contains(NAME);
    }

    private static List<String> finalizers(Allocation a) {
        List<String> finalizers = a.getMetadata().getFinalizers();
        return finalizers == null ? List.of() : finalizers;
    }

    /** A failed test (422) or a conflict (409): the allocation changed since it was seen. */
    private static boolean changedMeanwhile(KubernetesClientException e) {
        return e.getCode() == 422 || e.getCode() == 409;
    }

    private static ObjectNode op(String op, String path) {
        return JsonNodeFactory.instance.objectNode().put("op", op).put("path", path);
    }
}
