package dev.drover.podresources;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads the protobuf of a {@code v1.ListPodResourcesResponse} (kubelet's
 * {@code pkg/apis/podresources/v1/api.proto}), keeping only what says which devices containers hold:
 *
 * <pre>
 * ListPodResourcesResponse { repeated PodResources pod_resources = 1; }
 * PodResources             { string name = 1; string namespace = 2; repeated ContainerResources containers = 3; }
 * ContainerResources       { string name = 1; repeated ContainerDevices devices = 2; ... }
 * ContainerDevices         { string resource_name = 1; repeated string device_ids = 2; ... }
 * </pre>
 *
 * Other fields (CPU ids, memory, topology, dynamic resources, and any a newer kubelet adds) are skipped by their wire
 * type; a wire type protobuf does not have (or the deprecated groups) is refused, as are more than
 * {@link #MAX_PODS} Pods. Every length is checked against what is left, so a lie cannot read past the message.
 */
final class ListResponse {

    /** The most Pods one answer may list (a node runs at most a few hundred). */
    static final int MAX_PODS = 10_000;

    private static final int VARINT = 0;
    private static final int FIXED64 = 1;
    private static final int LENGTH = 2;
    private static final int FIXED32 = 5;

    private final byte[] buf;
    private int pos;
    private final int end;

    private ListResponse(byte[] buf, int from, int to) {
        this.buf = buf;
        this.pos = from;
        this.end = to;
    }

    /** The devices each container of each listed Pod holds; containers without devices are left out. */
    static List<PodDevices> decode(byte[] message) throws PodResourcesException {
        List<PodDevices> out = new ArrayList<>();
        ListResponse r = new ListResponse(message, 0, message.length);
        int pods = 0;
        while (r.more()) {
            int tag = r.tag();
            if (field(tag) == 1 && wire(tag) == LENGTH) {
                if (++pods > MAX_PODS) {
                    throw new PodResourcesException("it lists more than " + MAX_PODS + " Pods");
                }
                r.nested().pod(out);
            } else {
                r.skip(tag);
            }
        }
        return out;
    }

    private void pod(List<PodDevices> out) throws PodResourcesException {
        String name = "";
        String namespace = "";
        List<ListResponse> containers = new ArrayList<>();
        while (more()) {
            int tag = tag();
            switch (wire(tag) == LENGTH ? field(tag) : 0) {
                case 1 -> name = string();
                case 2 -> namespace = string();
                case 3 -> containers.add(nested());
                default -> skip(tag);
            }
        }
        for (ListResponse c : containers) {
            c.container(namespace, name, out);
        }
    }

    private void container(String namespace, String pod, List<PodDevices> out) throws PodResourcesException {
        String name = "";
        List<ListResponse> devices = new ArrayList<>();
        while (more()) {
            int tag = tag();
            switch (wire(tag) == LENGTH ? field(tag) : 0) {
                case 1 -> name = string();
                case 2 -> devices.add(nested());
                default -> skip(tag);
            }
        }
        for (ListResponse d : devices) {
            String resource = "";
            List<String> ids = new ArrayList<>();
            while (d.more()) {
                int tag = d.tag();
                switch (wire(tag) == LENGTH ? field(tag) : 0) {
                    case 1 -> resource = d.string();
                    case 2 -> ids.add(d.string());
                    default -> d.skip(tag);
                }
            }
            if (!ids.isEmpty()) {
                out.add(new PodDevices(namespace, pod, name, resource, ids));
            }
        }
    }

    private boolean more() {
        return pos < end;
    }

    private int tag() throws PodResourcesException {
        long tag = varint();
        if (tag >>> 3 == 0 || tag > 0xFFFF_FFFFL) {
            throw new PodResourcesException("its protobuf has a field numbered " + (tag >>> 3));
        }
        return (int) tag;
    }

    private static int field(int tag) {
        return tag >>> 3;
    }

    private static int wire(int tag) {
        return tag & 7;
    }

    private long varint() throws PodResourcesException {
        long v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (pos >= end) {
                throw new PodResourcesException("its protobuf ends inside a number");
            }
            byte b = buf[pos++];
            v |= (long) (b & 0x7f) << shift;
            if (b >= 0) {
                return v;
            }
        }
        throw new PodResourcesException("its protobuf has a number longer than 10 bytes");
    }

    private int length() throws PodResourcesException {
        long n = varint();
        if (n < 0 || n > end - pos) {
            throw new PodResourcesException(
                    "its protobuf has a field of " + n + " bytes where " + (end - pos) + " are left");
        }
        return (int) n;
    }

    private ListResponse nested() throws PodResourcesException {
        int n = length();
        ListResponse inner = new ListResponse(buf, pos, pos + n);
        pos += n;
        return inner;
    }

    private String string() throws PodResourcesException {
        int n = length();
        String s = new String(buf, pos, n, StandardCharsets.UTF_8);
        pos += n;
        return s;
    }

    private void skip(int tag) throws PodResourcesException {
        switch (wire(tag)) {
            case VARINT -> varint();
            case FIXED64 -> advance(8);
            case LENGTH -> advance(length());
            case FIXED32 -> advance(4);
            default ->
                throw new PodResourcesException("its protobuf has field " + field(tag) + " of wire type " + wire(tag)
                        + ", which proto3 does not use");
        }
    }

    private void advance(int n) throws PodResourcesException {
        if (n > end - pos) {
            throw new PodResourcesException("its protobuf ends inside a field");
        }
        pos += n;
    }
}
