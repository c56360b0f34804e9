package dev.drover.controller.services;

import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceList;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The publisher's way to the API server: reads a Service, creates, replaces and deletes EndpointSlices, lists this
 * node's. A slice that exists when it is created (left by an earlier run) is replaced; one gone when it is
 * replaced (deleted with its Service) is created again; a replace that lost a race is tried once more at the
 * current version. Anything else is thrown to the publisher, which retries after a back-off.
 */
final class SliceWrites {

    /** Slices listed per page, and the most pages read: an agent's own slices number its allocations' ports. */
    static final int PAGE = 500;

    static final int MAX_PAGES = 100;

    /** A slice as last written: its name and version, and what was written (null when only listed). */
    record Written(String name, String resourceVersion, EndpointSlice content) {}

    private final KubernetesClient client;

    SliceWrites(KubernetesClient client) {
        this.client = client;
    }

    Optional<Service> service(String namespace, String name) {
        return Optional.ofNullable(
                client.services().inNamespace(namespace).withName(name).get());
    }

    /** Writes {@code slice} (no version in it), replacing the version {@code known} when not null. */
    Written write(EndpointSlice slice, String known) {
        String ns = slice.getMetadata().getNamespace();
        String name = slice.getMetadata().getName();
        if (known != null) {
            try {
                return written(slice, replace(slice, known));
            } catch (KubernetesClientException e) {
                if (e.getCode() != 404 && e.getCode() != 409) {
                    throw e;
                }
                if (e.getCode() == 409) {
                    return written(slice, replace(slice, current(ns, name)));
                }
            }
        }
        try {
            return written(
                    slice,
                    client.discovery()
                            .v1()
                            .endpointSlices()
                            .inNamespace(ns)
                            .resource(slice)
                            .create());
        } catch (KubernetesClientException e) {
            if (e.getCode() != 409) {
                throw e;
            }
            return written(slice, replace(slice, current(ns, name)));
        }
    }

    void delete(String namespace, String name) {
        // an absent slice is no failure: deleted with its Service, or never written
        client.discovery()
                .v1()
                .endpointSlices()
                .inNamespace(namespace)
                .withName(name)
                .delete();
    }

    /** This node's slices, in every namespace, by their labels. */
    List<EndpointSlice> listOwn(Map<String, String> labels) {
        List<EndpointSlice> out = new ArrayList<>();
        String next = null;
        for (int page = 0; page < MAX_PAGES; page++) {
            EndpointSliceList list = client.discovery()
                    .v1()
                    .endpointSlices()
                    .inAnyNamespace()
                    .withLabels(labels)
                    .list(new ListOptionsBuilder()
                            .withLimit((long) PAGE)
                            .withContinue(next)
                            .build());
            out.addAll(list.getItems());
            next = list.getMetadata() == null ? null : list.getMetadata().getContinue();
            if (next == null || next.isEmpty()) {
                break;
            }
        }
        return out;
    }

    private String current(String namespace, String name) {
        EndpointSlice now = client.discovery()
                .v1()
                .endpointSlices()
                .inNamespace(namespace)
                .withName(name)
                .get();
        if (now == null) {
            throw new KubernetesClientException("endpoint slice " + namespace + "/" + name + " vanished while written");
        }
        return now.getMetadata().getResourceVersion();
    }

    private EndpointSlice replace(EndpointSlice slice, String version) {
        EndpointSlice versioned = new EndpointSliceBuilder(slice)
                .editMetadata()
                .withResourceVersion(version)
                .endMetadata()
                .build();
        return client.discovery()
                .v1()
                .endpointSlices()
                .inNamespace(slice.getMetadata().getNamespace())
                .resource(versioned)
                .update();
    }

    private static Written written(EndpointSlice content, EndpointSlice stored) {
        return new Written(content.getMetadata().getName(), stored.getMetadata().getResourceVersion(), content);
    }
}
