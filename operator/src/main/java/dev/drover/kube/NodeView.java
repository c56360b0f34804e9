package dev.drover.kube;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What the agent reads of a Node, and nothing else: its name, uid, labels and annotations, and its status's
 * capacity, allocatable and addresses. Read as fabric8's {@code Node}, the first read loaded some 90 classes that
 * nothing else of an agent with default settings loads: every model type a Node holds, with its builder and fluent
 * (reflection on the model's {@code edit()} and {@code toBuilder()} loads them). It is read as a
 * {@link GenericKubernetesResource}, the resource named in full ({@link #NODES}) so that no discovery is asked.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record NodeView(Metadata metadata, Status status) {

    /** Nodes, named so that the client asks the API server nothing to find them (no discovery). */
    public static final ResourceDefinitionContext NODES = new ResourceDefinitionContext.Builder()
            .withVersion("v1")
            .withKind("Node")
            .withPlural("nodes")
            .withNamespaced(false)
            .build();

    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Metadata(String name, String uid, Map<String, String> labels, Map<String, String> annotations) {}

    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Status(Map<String, Quantity> capacity, Map<String, Quantity> allocatable, List<Address> addresses) {}

    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Address(String type, String address) {}

    /** The Node {@code name} as a resource of the client: read, watched or patched without fabric8's Node model. */
    public static Resource<GenericKubernetesResource> resource(KubernetesClient client, String name) {
        return client.genericKubernetesResources(NODES).withName(name);
    }

    /** Reads the Node {@code name}; null when it is not found. */
    public static NodeView read(KubernetesClient client, String name) {
        return of(client.getKubernetesSerialization(), resource(client, name).get());
    }

    /** The fields of {@code node} (a Node as read from the API server) the agent uses; null for null. */
    public static NodeView of(KubernetesSerialization serialization, Object node) {
        return node == null ? null : serialization.convertValue(node, NodeView.class);
    }

    /** Its uid; null where it has none. */
    public String uid() {
        return metadata == null ? null : metadata.uid();
    }

    /** Its labels; null where it has none. */
    public Map<String, String> labels() {
        return metadata == null ? null : metadata.labels();
    }

    /** Its annotations; null where it has none. */
    public Map<String, String> annotations() {
        return metadata == null ? null : metadata.annotations();
    }

    /** Its status's capacity; null where it has none. */
    public Map<String, Quantity> capacity() {
        return status == null ? null : status.capacity();
    }

    /** Its status's allocatable; null where it has none. */
    public Map<String, Quantity> allocatable() {
        return status == null ? null : status.allocatable();
    }

    /**
     * Where clients dial the node's agent: its {@code InternalIP} addresses, then its {@code ExternalIP} ones, as the
     * Node lists them (the certificate names them all).
     */
    public List<String> dialled() {
        return dialled(status == null || status.addresses() == null ? List.of() : status.addresses());
    }

    /** {@link #dialled()} of the addresses {@code all}. */
    public static List<String> dialled(List<Address> all) {
        List<String> out = new ArrayList<>();
        for (String type : List.of("InternalIP", "ExternalIP")) {
            for (Address a : all) {
                if (type.equals(a.type()) && a.address() != null) {
                    out.add(a.address());
                }
            }
        }
        return out;
    }
}
