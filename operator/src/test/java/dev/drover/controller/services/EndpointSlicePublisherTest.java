package dev.drover.controller.services;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.drover.testing.LiveThreads;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.ServicePortBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A node's EndpointSlices for its allocations' Services, against fabric8's CRUD mock standing in for the API server. */
class EndpointSlicePublisherTest {

    static final String NS = "apps";
    static final String NODE = "node-a";
    static final String ADDRESS = "10.0.0.7";
    static final Duration SOON = Duration.ofSeconds(10);
    static final EndpointSlicePublisher.Timing QUICK = new EndpointSlicePublisher.Timing(
            Duration.ofMillis(20), Duration.ofHours(1), Duration.ofMillis(20), Duration.ofMillis(200));
    static final EndpointSlicePublisher.Timing RECHECKING = new EndpointSlicePublisher.Timing(
            Duration.ofMillis(20), Duration.ofMillis(100), Duration.ofMillis(20), Duration.ofMillis(200));

    /** The CRUD mock, counting the writes of EndpointSlices and failing the first ones while told to. */
    static final class SliceApi extends KubernetesCrudDispatcher {
        final AtomicInteger writes = new AtomicInteger();
        final AtomicInteger writesToFail = new AtomicInteger();

        SliceApi() {
            super(new ArrayList<>());
        }

        @Override
        public MockResponse dispatch(RecordedRequest request) {
            boolean write = !request.getMethod().equals("GET")
                    && (request.getPath().startsWith("/apis/discovery.k8s.io/v1/namespaces/")
                            || request.getPath().startsWith("/api/v1/namespaces/" + NS + "/services/"));
            if (write && writesToFail.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                return new MockResponse().setResponseCode(500).setBody("""
                        {"kind":"Status","apiVersion":"v1","status":"Failure","reason":"InternalError","code":500}""");
            }
            if (write) {
                writes.incrementAndGet();
            }
            return super.dispatch(request);
        }
    }

    final SliceApi api = new SliceApi();
    KubernetesMockServer server;
    KubernetesClient client;
    EndpointSlicePublisher publisher;
    Set<Long> threadsBefore;

    @BeforeEach
    void start() {
        threadsBefore = LiveThreads.ids(LiveThreads.now());
        server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), api, false);
        server.init(java.net.InetAddress.getLoopbackAddress(), 0);
        client = server.createClient(new JdkHttpClientFactory());
    }

    @AfterEach
    void stop() {
        if (publisher != null) {
            publisher.close();
            assertThat(LiveThreads.startedSince(threadsBefore, t -> !t.name().equals("endpoint-slices")))
                    .as("the publisher's thread stops with it")
                    .isEmpty();
        }
        client.close();
        server.destroy();
    }

    EndpointSlicePublisher publisher(EndpointSlicePublisher.Timing timing) {
        publisher = EndpointSlicePublisher.start(client, NODE, ADDRESS, timing, System::nanoTime);
        return publisher;
    }

    Service service(String name, String portName, String targetPort) {
        return client.resource(new ServiceBuilder()
                        .withNewMetadata()
                        .withName(name)
                        .withNamespace(NS)
                        .endMetadata()
                        .withNewSpec()
                        .withPorts(new ServicePortBuilder()
                                .withName(portName)
                                .withPort(80)
                                .withTargetPort(targetPort == null ? null : new IntOrString(targetPort))
                                .build())
                        .endSpec()
                        .build())
                .create();
    }

    List<EndpointSlice> slices() {
        return client.discovery().v1().endpointSlices().inNamespace(NS).list().getItems();
    }

    static AllocationRef alloc(String name) {
        return new AllocationRef(NS, name, "uid-" + name);
    }

    @Test
    void twoAllocationsOnOneNodeAreEndpointsOfTheService() {
        Service web = service("web", "http", null);
        publisher(QUICK);
        publisher.publish(alloc("web-1"), List.of(ServiceEndpoint.ready("web", "http", 20001)));
        publisher.publish(alloc("web-2"), List.of(ServiceEndpoint.ready("web", "http", 20002)));

        await().atMost(SOON).until(() -> slices().size() == 2);
        Map<Integer, EndpointSlice> byPort = new HashMap<>();
        for (EndpointSlice s : slices()) {
            byPort.put(s.getPorts().getFirst().getPort(), s);
            assertThat(s.getMetadata().getLabels())
                    .containsEntry("kubernetes.io/service-name", "web")
                    .containsEntry("endpointslice.kubernetes.io/managed-by", "agent.drover.dev")
                    .containsEntry("drover.dev/node", NODE);
            assertThat(s.getMetadata().getOwnerReferences()).singleElement().satisfies(o -> {
                assertThat(o.getKind()).isEqualTo("Service");
                assertThat(o.getName()).isEqualTo("web");
                assertThat(o.getUid()).isEqualTo(web.getMetadata().getUid());
                assertThat(o.getController()).isTrue();
            });
            assertThat(s.getAddressType()).isEqualTo("IPv4");
            assertThat(s.getPorts()).singleElement().satisfies(p -> {
                assertThat(p.getName()).isEqualTo("http");
                assertThat(p.getProtocol()).isEqualTo("TCP");
            });
            assertThat(s.getMetadata().getName()).startsWith("web-").hasSizeLessThanOrEqualTo(80);
        }
        assertThat(byPort).containsOnlyKeys(20001, 20002);
        Endpoint first = byPort.get(20001).getEndpoints().getFirst();
        assertThat(byPort.get(20001).getEndpoints()).hasSize(1);
        assertThat(first.getAddresses()).containsExactly(ADDRESS);
        assertThat(first.getNodeName()).isEqualTo(NODE);
        assertThat(first.getConditions().getReady()).isTrue();
        assertThat(first.getTargetRef().getKind()).isEqualTo("Allocation");
        assertThat(first.getTargetRef().getApiVersion()).isEqualTo("drover.dev/v1alpha1");
        assertThat(first.getTargetRef().getName()).isEqualTo("web-1");
        assertThat(first.getTargetRef().getUid()).isEqualTo("uid-web-1");
        assertThat(byPort.get(20002).getEndpoints().getFirst().getTargetRef().getName())
                .isEqualTo("web-2");
    }

    @Test
    void unreadyAllocationIsANotReadyEndpoint() {
        service("web", "http", null);
        publisher(QUICK);
        publisher.publish(alloc("starting"), List.of(new ServiceEndpoint("web", "http", 20001, false, false)));
        publisher.publish(alloc("stopping"), List.of(new ServiceEndpoint("web", "http", 20002, true, true)));

        await().atMost(SOON).until(() -> slices().size() == 2);
        Map<String, Endpoint> byAlloc = new HashMap<>();
        slices().forEach(s -> byAlloc.put(
                s.getEndpoints().getFirst().getTargetRef().getName(),
                s.getEndpoints().getFirst()));
        var starting = byAlloc.get("starting").getConditions();
        assertThat(List.of(starting.getReady(), starting.getServing(), starting.getTerminating()))
                .containsExactly(false, false, false);
        var stopping = byAlloc.get("stopping").getConditions();
        assertThat(List.of(stopping.getReady(), stopping.getServing(), stopping.getTerminating()))
                .as("a terminating endpoint is not ready, and serving while its allocation is")
                .containsExactly(false, true, true);

        publisher.publish(alloc("starting"), List.of(ServiceEndpoint.ready("web", "http", 20001)));
        await().atMost(SOON)
                .until(() -> slices().stream()
                        .map(s -> s.getEndpoints().getFirst())
                        .filter(e -> e.getTargetRef().getName().equals("starting"))
                        .allMatch(e -> e.getConditions().getReady()));
    }

    @Test
    void stoppedAllocationLeavesTheSlice() {
        service("web", "http", null);
        publisher(QUICK);
        publisher.publish(alloc("web-1"), List.of(ServiceEndpoint.ready("web", "http", 20001)));
        publisher.publish(alloc("web-2"), List.of(ServiceEndpoint.ready("web", "http", 20002)));
        await().atMost(SOON).until(() -> slices().size() == 2);

        publisher.publish(alloc("web-1"), List.of());

        await().atMost(SOON).until(() -> slices().size() == 1);
        assertThat(slices().getFirst().getEndpoints().getFirst().getTargetRef().getName())
                .isEqualTo("web-2");
    }

    @Test
    void deletedServiceTakesItsSlices() {
        service("web", "http", null);
        publisher(RECHECKING);
        publisher.publish(alloc("web-1"), List.of(ServiceEndpoint.ready("web", "http", 20001)));
        await().atMost(SOON).until(() -> slices().size() == 1);

        // the mock has no garbage collector: the agent's own recheck deletes the slice
        client.services().inNamespace(NS).withName("web").delete();

        await().atMost(SOON).until(() -> slices().isEmpty());
    }

    @Test
    void aSliceTheGarbageCollectorTookFirstIsDeletedOnce() {
        service("web", "http", null);
        publisher(RECHECKING);
        publisher.publish(alloc("web-1"), List.of(ServiceEndpoint.ready("web", "http", 20001)));
        await().atMost(SOON).until(() -> slices().size() == 1);
        int before = api.writes.get();

        // as a real cluster's garbage collector: the slice goes with its Service, before the agent looks
        client.resource(slices().getFirst()).delete();
        client.services().inNamespace(NS).withName("web").delete();
        await().pollDelay(Duration.ofMillis(600)).atMost(SOON).until(() -> true);

        // the test's own two deletions, and the agent's one of a slice already gone: no retries of it
        assertThat(api.writes.get() - before).isEqualTo(3);
        assertThat(slices()).isEmpty();
    }

    @Test
    void serviceCreatedLaterGetsItsSlice() {
        publisher(RECHECKING);
        publisher.publish(alloc("web-1"), List.of(ServiceEndpoint.ready("web", "http", 20001)));
        await().pollDelay(Duration.ofMillis(300)).atMost(SOON).until(() -> true);
        assertThat(slices()).as("no slice without its Service").isEmpty();

        service("web", "http", null);

        await().atMost(SOON).until(() -> slices().size() == 1);
    }

    @Test
    void servicePortTargetingTheAllocationsPortNamesTheSlicePort() {
        service("web", "public", "http");
        publisher(QUICK);
        publisher.publish(alloc("web-1"), List.of(ServiceEndpoint.ready("web", "http", 20001)));

        await().atMost(SOON).until(() -> slices().size() == 1);
        assertThat(slices().getFirst().getPorts().getFirst().getName())
                .as("kube-proxy routes Service port 'public' to the slice port of that name")
                .isEqualTo("public");
    }

    @Test
    void serviceWithoutAPortForTheAllocationGetsNoSlice() {
        service("web", "metrics", "metrics");
        publisher(QUICK);
        publisher.publish(alloc("web-1"), List.of(ServiceEndpoint.ready("web", "http", 20001)));
        publisher.publish(alloc("web-2"), List.of(ServiceEndpoint.ready("web", "metrics", 20002)));

        await().atMost(SOON).until(() -> slices().size() == 1);
        assertThat(slices().getFirst().getPorts().getFirst().getPort()).isEqualTo(20002);
    }

    @Test
    void aBurstOfChangesIsOneWriteAndRepeatingOneWritesNothing() {
        service("web", "http", null);
        publisher(new EndpointSlicePublisher.Timing(
                Duration.ofMillis(300), Duration.ofHours(1), Duration.ofMillis(20), Duration.ofMillis(200)));
        for (int i = 0; i < 20; i++) {
            publisher.publish(alloc("web-1"), List.of(new ServiceEndpoint("web", "http", 20001, i % 2 == 1, false)));
        }
        await().atMost(SOON).until(() -> slices().size() == 1);
        await().pollDelay(Duration.ofMillis(400)).atMost(SOON).until(() -> true);
        assertThat(api.writes.get()).as("twenty changes within the window").isEqualTo(1);
        assertThat(slices().getFirst().getEndpoints().getFirst().getConditions().getReady())
                .isTrue();

        publisher.publish(alloc("web-1"), List.of(ServiceEndpoint.ready("web", "http", 20001)));
        publisher.publish(alloc("other"), List.of());
        await().pollDelay(Duration.ofMillis(400)).atMost(SOON).until(() -> true);
        assertThat(api.writes.get()).as("nothing changed").isEqualTo(1);
    }

    @Test
    void failedWritesAreRetried() {
        service("web", "http", null);
        api.writesToFail.set(3);
        publisher(QUICK);
        publisher.publish(alloc("web-1"), List.of(ServiceEndpoint.ready("web", "http", 20001)));

        await().atMost(SOON).until(() -> slices().size() == 1);
        assertThat(api.writesToFail.get()).isZero();
    }

    @Test
    void slicesNoAllocationClaimsAreDeletedOnceAllocationsAreKnown() {
        Service web = service("web", "http", null);
        client.resource(leftover("web-stale", NODE)).create();
        client.resource(leftover("web-other-node", "node-b")).create();
        publisher(QUICK);
        publisher.publish(alloc("web-1"), List.of(ServiceEndpoint.ready("web", "http", 20001)));
        String claimed = new SliceKey(NS, "web", "http", 20001).sliceName(NODE);
        // the claimed slice exists from an earlier run: it is taken over, not duplicated
        client.resource(new EndpointSliceBuilder(leftover(claimed, NODE))
                        .editMetadata()
                        .withOwnerReferences(List.of())
                        .endMetadata()
                        .build())
                .createOr(o -> o.update());
        await().pollDelay(Duration.ofMillis(200)).atMost(SOON).until(() -> true);
        assertThat(slices())
                .as("nothing is deleted before the allocations are known")
                .hasSize(3);

        publisher.allocationsKnown();

        await().atMost(SOON)
                .untilAsserted(() -> assertThat(slices())
                        .extracting(s -> s.getMetadata().getName())
                        .containsExactlyInAnyOrder(claimed, "web-other-node"));
        EndpointSlice ours = client.discovery()
                .v1()
                .endpointSlices()
                .inNamespace(NS)
                .withName(claimed)
                .get();
        assertThat(ours.getMetadata().getOwnerReferences().getFirst().getUid())
                .isEqualTo(web.getMetadata().getUid());
    }

    static EndpointSlice leftover(String name, String node) {
        return new EndpointSliceBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace(NS)
                .addToLabels("kubernetes.io/service-name", "web")
                .addToLabels("endpointslice.kubernetes.io/managed-by", "agent.drover.dev")
                .addToLabels("drover.dev/node", node)
                .endMetadata()
                .withAddressType("IPv4")
                .addNewEndpoint()
                .withAddresses("10.0.0.9")
                .withNodeName(node)
                .endEndpoint()
                .addNewPort()
                .withName("http")
                .withPort(20009)
                .endPort()
                .build();
    }

    @Test
    void anIpv6AddressMakesIpv6Slices() {
        service("web", "http", null);
        publisher = EndpointSlicePublisher.start(client, NODE, "fd00::7", QUICK, System::nanoTime);
        publisher.publish(alloc("web-1"), List.of(ServiceEndpoint.ready("web", "http", 20001)));

        await().atMost(SOON).until(() -> slices().size() == 1);
        assertThat(slices().getFirst().getAddressType()).isEqualTo("IPv6");
        assertThat(slices().getFirst().getEndpoints().getFirst().getAddresses()).containsExactly("fd00:0:0:0:0:0:0:7");
    }
}
