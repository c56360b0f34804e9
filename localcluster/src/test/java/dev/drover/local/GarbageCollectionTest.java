package dev.drover.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The local cluster's EndpointSlices and the part of garbage collection Drover relies on: deleting a Service deletes
 * the slices it owns.
 */
class GarbageCollectionTest {

    static LocalApiServer server;
    static KubernetesClient client;

    @BeforeAll
    static void start() throws Exception {
        server = LocalApiServer.start(LocalApiServer.Options.defaults());
        client = server.client();
        client.resource(new NamespaceBuilder()
                        .withNewMetadata()
                        .withName("gc")
                        .endMetadata()
                        .build())
                .create();
    }

    @AfterAll
    static void stop() {
        client.close();
        server.close();
    }

    static Service service(String name) {
        return client.resource(new ServiceBuilder()
                        .withNewMetadata()
                        .withName(name)
                        .withNamespace("gc")
                        .endMetadata()
                        .withNewSpec()
                        .addNewPort()
                        .withName("http")
                        .withPort(80)
                        .endPort()
                        .endSpec()
                        .build())
                .create();
    }

    static OwnerReference owner(HasMetadata o) {
        return new OwnerReferenceBuilder()
                .withApiVersion(o.getApiVersion())
                .withKind(o.getKind())
                .withName(o.getMetadata().getName())
                .withUid(o.getMetadata().getUid())
                .withController(true)
                .build();
    }

    static EndpointSlice slice(String name, List<OwnerReference> owners) {
        return client.resource(new EndpointSliceBuilder()
                        .withNewMetadata()
                        .withName(name)
                        .withNamespace("gc")
                        .withOwnerReferences(owners)
                        .addToLabels("kubernetes.io/service-name", "web")
                        .endMetadata()
                        .withAddressType("IPv4")
                        .addNewEndpoint()
                        .withAddresses("10.0.0.7")
                        .withNodeName("local")
                        .endEndpoint()
                        .addNewPort()
                        .withName("http")
                        .withPort(20001)
                        .endPort()
                        .build())
                .create();
    }

    List<String> slices() {
        return client.discovery().v1().endpointSlices().inNamespace("gc").list().getItems().stream()
                .map(s -> s.getMetadata().getName())
                .sorted()
                .toList();
    }

    @Test
    void deletingAServiceDeletesTheSlicesItOwns() {
        Service web = service("web");
        Service other = service("other");
        slice("web-a", List.of(owner(web)));
        slice("web-b", List.of(owner(web)));
        slice("other-a", List.of(owner(other)));
        slice("web-and-other", List.of(owner(web), owner(other)));
        slice("unowned", List.of());

        client.services().inNamespace("gc").withName("web").delete();

        assertThat(slices())
                .as("a dependent with an owner left stays")
                .containsExactly("other-a", "unowned", "web-and-other");
        client.services().inNamespace("gc").withName("other").delete();
        assertThat(slices()).containsExactly("unowned");
        client.discovery()
                .v1()
                .endpointSlices()
                .inNamespace("gc")
                .withName("unowned")
                .delete();
    }

    @Test
    void dependentsOfDependentsGoToo() {
        Service svc = service("chain");
        ConfigMap middle = client.resource(new ConfigMapBuilder()
                        .withNewMetadata()
                        .withName("middle")
                        .withNamespace("gc")
                        .withOwnerReferences(owner(svc))
                        .endMetadata()
                        .build())
                .create();
        slice("chain-end", List.of(owner(middle)));

        client.services().inNamespace("gc").withName("chain").delete();

        assertThat(client.configMaps().inNamespace("gc").withName("middle").get())
                .isNull();
        assertThat(slices()).doesNotContain("chain-end");
    }
}
