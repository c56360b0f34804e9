package dev.drover.controller.services;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointConditionsBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPort;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPortBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What an EndpointSlice of this node holds, decided from the allocations that publish into it and their Service,
 * with no I/O. It follows Kubernetes' own EndpointSlice controller (kubernetes/kubernetes,
 * staging/src/k8s.io/endpointslice, {@code newEndpointSlice}): the labels {@code kubernetes.io/service-name} and
 * {@code endpointslice.kubernetes.io/managed-by} (ours: {@code agent.drover.dev}, so that controller leaves the
 * slices alone), an owner reference to the Service with {@code controller: true}, so that deleting the Service
 * deletes them; unlike it, without {@code blockOwnerDeletion}, which the OwnerReferencesPermissionEnforcement
 * admission plugin lets only those who may update the Service's finalizers set. Conditions as the EndpointSlice
 * API defines them: {@code serving} is the allocation's readiness, {@code terminating} whether it is stopping, and
 * {@code ready} is serving and not terminating.
 */
final class SliceShapes {

    static final String SERVICE_NAME = "kubernetes.io/service-name";
    static final String MANAGED_BY = "endpointslice.kubernetes.io/managed-by";
    static final String MANAGER = "agent.drover.dev";
    static final String NODE = "drover.dev/node";
    /** The most endpoints the EndpointSlice API lets one slice hold. */
    static final int MAX_ENDPOINTS = 1000;

    /** An allocation's endpoint in a slice. */
    record Member(AllocationRef allocation, ServiceEndpoint endpoint) {}

    private SliceShapes() {}

    /**
     * The ports of {@code service} that an allocation's port {@code portName} serves: those whose {@code targetPort}
     * names it; else the one named as it; else the Service's one port when it has a single port without a name.
     * kube-proxy routes a Service port to the slice ports of the same name, so the slice carries each one's name.
     */
    static List<ServicePort> servicePorts(Service service, String portName) {
        List<ServicePort> ports = service.getSpec() == null || service.getSpec().getPorts() == null
                ? List.of()
                : service.getSpec().getPorts();
        List<ServicePort> targeting = ports.stream()
                .filter(p -> p.getTargetPort() != null
                        && portName.equals(p.getTargetPort().getStrVal()))
                .toList();
        if (!targeting.isEmpty()) {
            return targeting;
        }
        List<ServicePort> named =
                ports.stream().filter(p -> portName.equals(p.getName())).toList();
        if (!named.isEmpty()) {
            return named;
        }
        if (ports.size() == 1
                && (ports.getFirst().getName() == null
                        || ports.getFirst().getName().isEmpty())) {
            IntOrString target = ports.getFirst().getTargetPort();
            if (target == null || target.getStrVal() == null) {
                return ports;
            }
        }
        return List.of();
    }

    /**
     * The slice {@code key} on {@code node}, whose address is {@code address} of {@code addressType}: its members
     * ordered by allocation, at most {@link #MAX_ENDPOINTS} of them (the first by namespace and name).
     */
    static EndpointSlice slice(
            SliceKey key,
            List<Member> members,
            Service service,
            List<ServicePort> servicePorts,
            String node,
            String address,
            String addressType) {
        List<Endpoint> endpoints = new ArrayList<>();
        members.stream()
                .sorted(Comparator.comparing((Member m) -> m.allocation().name()))
                .limit(MAX_ENDPOINTS)
                .forEach(m -> endpoints.add(endpoint(m, node, address)));
        List<EndpointPort> ports = new ArrayList<>();
        for (ServicePort p : servicePorts) {
            ports.add(new EndpointPortBuilder()
                    .withName(p.getName() == null ? "" : p.getName())
                    .withPort(key.hostPort())
                    .withProtocol(p.getProtocol() == null ? "TCP" : p.getProtocol())
                    .withAppProtocol(p.getAppProtocol())
                    .build());
        }
        Map<String, String> labels = new TreeMap<>();
        labels.put(SERVICE_NAME, key.service());
        labels.put(MANAGED_BY, MANAGER);
        labels.put(NODE, SliceKey.nodeLabel(node));
        return new EndpointSliceBuilder()
                .withMetadata(new ObjectMetaBuilder()
                        .withName(key.sliceName(node))
                        .withNamespace(key.namespace())
                        .withLabels(labels)
                        .withOwnerReferences(new OwnerReferenceBuilder()
                                .withApiVersion("v1")
                                .withKind("Service")
                                .withName(service.getMetadata().getName())
                                .withUid(service.getMetadata().getUid())
                                .withController(true)
                                .build())
                        .build())
                .withAddressType(addressType)
                .withEndpoints(endpoints)
                .withPorts(ports)
                .build();
    }

    private static Endpoint endpoint(Member m, String node, String address) {
        ServiceEndpoint e = m.endpoint();
        AllocationRef a = m.allocation();
        return new EndpointBuilder()
                .withAddresses(address)
                .withConditions(new EndpointConditionsBuilder()
                        .withReady(e.ready() && !e.terminating())
                        .withServing(e.ready())
                        .withTerminating(e.terminating())
                        .build())
                .withNodeName(node)
                .withTargetRef(new ObjectReferenceBuilder()
                        .withApiVersion("drover.dev/v1alpha1")
                        .withKind("Allocation")
                        .withNamespace(a.namespace())
                        .withName(a.name())
                        .withUid(a.uid().isEmpty() ? null : a.uid())
                        .build())
                .build();
    }
}
