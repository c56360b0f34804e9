package dev.drover.controller.services;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.regex.Pattern;

/**
 * One EndpointSlice of this node: every endpoint of a slice shares its ports list, and two allocations on one node
 * have different host ports, so a slice holds the allocations publishing one port name at one host port into one
 * Service.
 *
 * @param namespace the Service's namespace
 * @param service the Service's name
 * @param portName the allocations' port name
 * @param hostPort the host port they share
 */
record SliceKey(String namespace, String service, String portName, int hostPort) {

    /** Hex digits of the name's hash: 64 bits, so two nodes' or Services' slices never meet by chance. */
    private static final int HASH_HEX = 16;

    private static final Pattern LABEL_VALUE = Pattern.compile("[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?");

    /**
     * The slice's name on {@code node}: the Service's name (a DNS-1123 label, at most 63 characters), a dash and a
     * hash of node, namespace, Service, port name and host port, so it is at most 80 characters, a DNS-1123
     * subdomain, and the same every time. Kubernetes' own EndpointSlice controller names its slices
     * {@code <service>-} plus a random suffix (generateName); a deterministic name lets a restarted agent find and
     * update its slice instead of creating a second one.
     */
    String sliceName(String node) {
        return service + "-" + hash(node + "\0" + namespace + "\0" + service + "\0" + portName + "\0" + hostPort);
    }

    /**
     * The value of the {@code drover.dev/node} label that lets an agent list its own node's slices: the node's name
     * when it is a label value (at most 63 characters), otherwise {@code sha256-} and a hash of it.
     */
    static String nodeLabel(String node) {
        return LABEL_VALUE.matcher(node).matches() ? node : "sha256-" + hash(node);
    }

    private static String hash(String s) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest).substring(0, HASH_HEX);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }
}
