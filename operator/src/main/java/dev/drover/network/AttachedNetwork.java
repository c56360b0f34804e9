package dev.drover.network;

import java.util.List;

/**
 * What {@link AllocNetworks#setUp} made for one allocation, in a form Jackson writes and reads, so the agent can keep
 * it in its store and hand it back to {@link AllocNetworks#check} and {@link AllocNetworks#tearDown} after a restart.
 *
 * @param mode the allocation's network mode
 * @param containerId the CNI container id (and namespace name) derived from the allocation's id; null for host
 * @param netns the namespace's file, which tasks join ({@code nsenter --net=FILE}); null for host
 * @param ip the allocation's IPv4 address, without prefix, in bridge mode; null otherwise
 * @param attachments the network lists run, in order: loopback on {@code lo}, then (bridge) the bridge's chain on
 *     {@code eth0}
 */
public record AttachedNetwork(
        NetworkMode mode, String containerId, String netns, String ip, List<Attachment> attachments) {

    /** The host's network: nothing made. */
    public static final AttachedNetwork HOST = new AttachedNetwork(NetworkMode.HOST, null, null, null, List.of());

    public AttachedNetwork {
        attachments = attachments == null ? List.of() : List.copyOf(attachments);
    }
}
