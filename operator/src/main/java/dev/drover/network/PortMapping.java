package dev.drover.network;

import dev.drover.common.UserText;

/**
 * One of an allocation's ports in {@code bridge} mode: {@code hostPort} on the node reaches port {@code to} in the
 * allocation's namespace. {@code name} is the API's port name, for messages.
 */
public record PortMapping(String name, int hostPort, int to) {

    public PortMapping {
        if (hostPort < 1 || hostPort > 65535 || to < 1 || to > 65535) {
            throw new IllegalArgumentException("port " + UserText.quote(name) + ": host port " + hostPort + " and"
                    + " port " + to + " must each be 1 to 65535");
        }
    }
}
