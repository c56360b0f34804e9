package dev.drover.admission;

import dev.drover.api.v1alpha1.Port;
import dev.drover.common.UserText;
import dev.drover.state.AllocId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The node's host ports and the allocations that hold them: a static port is given to the allocation that asks for
 * it if no other holds it, a dynamic one is picked from the agent's range ({@code dynamicPorts}) among the ports no
 * allocation holds, starting after the last one picked, so that a port just freed is not handed out again at once.
 * An allocation holds its ports until it is released. Not thread-safe: its caller's lock guards it. Pure: no I/O.
 */
public final class NodePorts {

    public static final String PORT_CONFLICT = "PortConflict";
    public static final String OUT_OF_PORTS = "OutOfports";

    /** The range dynamic ports come from, both ends included. */
    public record Range(int first, int last) {

        public static final Range DEFAULT = new Range(20000, 32000);

        public Range {
            if (first < 1 || last > 65535 || first > last) {
                throw new IllegalArgumentException(
                        "dynamic ports " + first + "-" + last + " is not a range of ports (low-high, within 1-65535)");
            }
        }

        /** {@code low-high}, e.g. {@code 20000-32000}. */
        public static Range parse(String text) {
            String[] parts = text == null ? new String[0] : text.strip().split("-", -1);
            if (parts.length != 2) {
                throw new IllegalArgumentException(
                        UserText.quote(text) + " is not a port range; give low-high, e.g. 20000-32000");
            }
            try {
                return new Range(Integer.parseInt(parts[0].strip()), Integer.parseInt(parts[1].strip()));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(
                        UserText.quote(text) + " is not a port range; give low-high, e.g. 20000-32000");
            }
        }

        int size() {
            return last - first + 1;
        }

        @Override
        public String toString() {
            return first + "-" + last;
        }
    }

    /**
     * What asking for ports decided.
     *
     * @param hostPorts when admitted, each port's host port by port name, in the spec's order; empty when refused
     * @param reason    {@link #PORT_CONFLICT} or {@link #OUT_OF_PORTS} when refused, null when admitted
     * @param message   why it was refused, naming the port and its holder; null when admitted
     */
    public record Picks(Map<String, Integer> hostPorts, String reason, String message) {

        public boolean admitted() {
            return reason == null;
        }
    }

    private final Range range;
    private final Map<Integer, AllocId> holders = new HashMap<>();
    private final Map<AllocId, Map<String, Integer>> held = new HashMap<>();
    private int next;

    public NodePorts(Range range) {
        this.range = range;
        this.next = range.first();
    }

    /**
     * The host ports for {@code ports} of allocation {@code id}: those it holds already by name where they still fit
     * its spec, the static ones if free, dynamic ones picked. Nothing is taken: {@link #take} takes what was decided.
     */
    public Picks pick(AllocId id, List<Port> ports) {
        Map<String, Integer> mine = held.getOrDefault(id, Map.of());
        Map<String, Integer> out = new LinkedHashMap<>();
        List<Integer> taken = new ArrayList<>();
        List<Port> dynamic = new ArrayList<>();
        for (Port p : ports) {
            if (p.getStatic() == null) {
                dynamic.add(p);
                continue;
            }
            int port = p.getStatic();
            AllocId holder = holders.get(port);
            if (holder != null && !holder.equals(id)) {
                return new Picks(
                        Map.of(),
                        PORT_CONFLICT,
                        "The node's port " + port + " (port " + UserText.quote(p.getName()) + ") is held by allocation "
                                + holder + "; free it or give another static port");
            }
            out.put(p.getName(), port);
            taken.add(port);
        }
        int cursor = next;
        for (Port p : dynamic) {
            Integer had = mine.get(p.getName());
            if (had != null && range.first() <= had && had <= range.last() && !taken.contains(had)) {
                out.put(p.getName(), had);
                taken.add(had);
                continue;
            }
            int found = -1;
            for (int i = 0; i < range.size(); i++) {
                int candidate = range.first() + Math.floorMod(cursor - range.first() + i, range.size());
                AllocId holder = holders.get(candidate);
                if ((holder == null || holder.equals(id)) && !taken.contains(candidate)) {
                    found = candidate;
                    break;
                }
            }
            if (found < 0) {
                return new Picks(
                        Map.of(),
                        OUT_OF_PORTS,
                        "The node has no free port left in its dynamic range " + range + " for port "
                                + UserText.quote(p.getName()));
            }
            out.put(p.getName(), found);
            taken.add(found);
            cursor = found + 1;
        }
        Map<String, Integer> ordered = new LinkedHashMap<>();
        for (Port p : ports) {
            ordered.put(p.getName(), out.get(p.getName()));
        }
        return new Picks(ordered, null, null);
    }

    /** {@code id} holds {@code hostPorts} (by port name) in place of what it held. */
    public void take(AllocId id, Map<String, Integer> hostPorts) {
        release(id);
        if (hostPorts.isEmpty()) {
            return;
        }
        held.put(id, Map.copyOf(hostPorts));
        for (int port : hostPorts.values()) {
            holders.put(port, id);
            if (range.first() <= port && port <= range.last()) {
                next = port == range.last() ? range.first() : port + 1;
            }
        }
    }

    /** Frees {@code id}'s ports. */
    public void release(AllocId id) {
        Map<String, Integer> had = held.remove(id);
        if (had != null) {
            had.values().forEach(port -> holders.remove(port, id));
        }
    }

    /** {@code id}'s host ports by port name; empty when it holds none. */
    public Map<String, Integer> held(AllocId id) {
        return held.getOrDefault(id, Map.of());
    }

    /** How many host ports are held, for the node's figures. */
    public int heldCount() {
        return holders.size();
    }

    /** Every held port and its holder, in port order (for diagnostics). */
    public Map<Integer, AllocId> holders() {
        return new TreeMap<>(holders);
    }
}
