package dev.drover.controller.services;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.AllocationStatus;
import dev.drover.api.v1alpha1.NetworkMode;
import dev.drover.api.v1alpha1.NetworkStatus;
import dev.drover.api.v1alpha1.ServicePublication;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What an allocation publishes, read from its spec.services and status.network. */
class PublicationsTest {

    static Allocation allocation(List<ServicePublication> services, List<NetworkStatus.PortStatus> ports) {
        Allocation a = new Allocation();
        a.setMetadata(new ObjectMetaBuilder()
                .withNamespace("apps")
                .withName("web-1")
                .withUid("u-1")
                .build());
        AllocationSpec spec = new AllocationSpec();
        spec.setServices(services);
        a.setSpec(spec);
        if (ports != null) {
            AllocationStatus status = new AllocationStatus();
            status.setNetwork(new NetworkStatus(NetworkMode.HOST, "10.0.0.7", ports));
            a.setStatus(status);
        }
        return a;
    }

    @Test
    void eachServiceGetsItsPortsHostPort() {
        Allocation a = allocation(
                List.of(new ServicePublication("web", "http"), new ServicePublication("admin", "metrics")),
                List.of(
                        new NetworkStatus.PortStatus("http", 20001, 20001),
                        new NetworkStatus.PortStatus("metrics", 20002, 20002)));

        assertThat(Publications.endpoints(a, true, false))
                .containsExactly(
                        ServiceEndpoint.ready("web", "http", 20001), ServiceEndpoint.ready("admin", "metrics", 20002));
        assertThat(Publications.ref(a)).isEqualTo(new AllocationRef("apps", "web-1", "u-1"));
    }

    @Test
    void aPortWithoutAHostPortYetPublishesNothing() {
        assertThat(Publications.endpoints(
                        allocation(List.of(new ServicePublication("web", "http")), null), true, false))
                .isEmpty();
        assertThat(Publications.endpoints(
                        allocation(
                                List.of(new ServicePublication("web", "http")),
                                List.of(new NetworkStatus.PortStatus("http", null, 8080))),
                        true,
                        false))
                .isEmpty();
    }

    @Test
    void readinessAndTerminationAreCarried() {
        Allocation a = allocation(
                List.of(new ServicePublication("web", "http")),
                List.of(new NetworkStatus.PortStatus("http", 20001, 80)));
        assertThat(Publications.endpoints(a, false, true))
                .containsExactly(new ServiceEndpoint("web", "http", 20001, false, true));
    }
}
