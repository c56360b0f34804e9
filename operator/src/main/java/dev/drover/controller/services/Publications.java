package dev.drover.controller.services;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.NetworkStatus;
import dev.drover.api.v1alpha1.ServicePublication;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What an allocation publishes into Services, read from it with no I/O: each {@code spec.services} entry whose port
 * holds a host port in {@code status.network.ports}. An entry whose port holds none (not started yet, or a network
 * of mode {@code none}) publishes nothing until it does; one whose names no Service could have, nothing.
 */
public final class Publications {

    private Publications() {}

    /** The allocation's reference for its endpoints' {@code targetRef}. */
    public static AllocationRef ref(Allocation a) {
        String uid = a.getMetadata().getUid();
        return new AllocationRef(a.getMetadata().getNamespace(), a.getMetadata().getName(), uid == null ? "" : uid);
    }

    /**
     * The endpoints of {@code a}, {@code ready} (its Ready condition) and {@code terminating} (being stopped) as
     * given; none when it publishes into no Service.
     */
    public static List<ServiceEndpoint> endpoints(Allocation a, boolean ready, boolean terminating) {
        List<ServicePublication> services =
                a.getSpec() == null ? List.of() : a.getSpec().serviceList();
        NetworkStatus network = a.getStatus() == null ? null : a.getStatus().getNetwork();
        if (services.isEmpty() || network == null || network.getPorts() == null) {
            return List.of();
        }
        Map<String, Integer> hostPorts = new HashMap<>();
        for (NetworkStatus.PortStatus p : network.getPorts()) {
            if (p != null && p.name() != null && p.hostPort() != null && p.hostPort() > 0 && p.hostPort() <= 65535) {
                hostPorts.putIfAbsent(p.name(), p.hostPort());
            }
        }
        List<ServiceEndpoint> out = new ArrayList<>();
        for (ServicePublication s : services) {
            Integer hostPort = hostPorts.get(s.getPort());
            if (hostPort == null) {
                continue;
            }
            try {
                out.add(new ServiceEndpoint(s.getName(), s.getPort(), hostPort, ready, terminating));
            } catch (IllegalArgumentException e) {
                // a name the API's validation refuses (an object stored before it): no Service can have it
            }
        }
        return out;
    }
}
