package dev.drover.controller.services;

import dev.drover.common.UserText;
import java.util.regex.Pattern;

/**
 * One port of an allocation published into one Kubernetes Service: the allocation's port {@code portName}, open on
 * the node at {@code hostPort}, goes into the Service {@code service} of the allocation's namespace.
 *
 * @param service the Service's name (a DNS-1123 label, as {@code spec.services} names it; one Kubernetes cannot name
 *     a Service, starting with a digit, gets no slice, since its Service never exists)
 * @param portName the allocation's port name ({@code spec.network.ports[].name})
 * @param hostPort the port open on the node's address for it
 * @param ready whether the allocation is ready: the endpoint's {@code serving} condition
 * @param terminating whether the allocation is being stopped: its endpoint is then not {@code ready}
 */
public record ServiceEndpoint(String service, String portName, int hostPort, boolean ready, boolean terminating) {

    private static final Pattern DNS_1123_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");
    private static final Pattern PORT_NAME = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");

    public ServiceEndpoint {
        if (service == null || !DNS_1123_LABEL.matcher(service).matches()) {
            throw new IllegalArgumentException("service " + UserText.quote(service)
                    + " is not a Service name: lower-case letters, digits and '-', at most 63");
        }
        if (portName == null || !PORT_NAME.matcher(portName).matches()) {
            throw new IllegalArgumentException("port " + UserText.quote(portName) + " of service " + service
                    + " is not a port name: lower-case letters, digits and '-', at most 63");
        }
        if (hostPort < 1 || hostPort > 65535) {
            throw new IllegalArgumentException(
                    "host port " + hostPort + " of port " + portName + " is not within 1 to 65535");
        }
    }

    /** A ready endpoint that is not terminating: an allocation running and healthy. */
    public static ServiceEndpoint ready(String service, String portName, int hostPort) {
        return new ServiceEndpoint(service, portName, hostPort, true, false);
    }
}
