package dev.drover.api.validation;

import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.Check;
import dev.drover.api.v1alpha1.Network;
import dev.drover.api.v1alpha1.NetworkMode;
import dev.drover.api.v1alpha1.Port;
import dev.drover.api.v1alpha1.ServicePublication;
import dev.drover.api.v1alpha1.Task;
import dev.drover.common.UserText;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The rules of {@code spec.network} and {@code spec.services} (docs/networking.md): ports named uniquely, static
 * ports distinct, {@code to} only where a bridge maps it, no ports without a network to reach, no raw_exec task
 * outside the node's network, and every port a service or a check names one the allocation has.
 */
final class NetworkRules {

    /** The driver whose tasks are host processes in the node's namespaces: they cannot join another network. */
    private static final String RAW_EXEC = "raw_exec";

    private NetworkRules() {}

    static void validate(AllocationSpec spec, List<Violation> out) {
        Network network = spec.getNetwork();
        NetworkMode mode = spec.effectiveNetworkMode();
        if (network != null) {
            ports(mode, network.getPorts(), out);
        }
        if (mode != NetworkMode.HOST && spec.getTasks() != null) {
            for (int i = 0; i < spec.getTasks().size(); i++) {
                Task t = spec.getTasks().get(i);
                if (t != null && RAW_EXEC.equals(t.getDriver())) {
                    out.add(new Violation(
                            "spec.tasks[" + i + "].driver",
                            "raw_exec runs in the node's network and cannot join a " + mode.apiName()
                                    + " network; use exec or oci, or network mode host"));
                }
            }
        }
        services(spec, out);
        checks(spec, out);
    }

    private static void ports(NetworkMode mode, List<Port> ports, List<Violation> out) {
        if (ports == null) {
            return;
        }
        if (ports.size() > Network.MAX_PORTS) {
            out.add(new Violation(
                    "spec.network.ports",
                    "has " + ports.size() + " ports; at most " + Network.MAX_PORTS + " are allowed"));
            return;
        }
        if (mode == NetworkMode.NONE && !ports.isEmpty()) {
            out.add(new Violation(
                    "spec.network.ports", "a none network has no ports: nothing reaches it; use bridge or host"));
        }
        Set<String> names = new HashSet<>();
        Map<Integer, String> statics = new HashMap<>();
        for (int i = 0; i < ports.size(); i++) {
            String at = "spec.network.ports[" + i + "]";
            Port p = ports.get(i);
            if (p == null) {
                out.add(new Violation(at, "is empty; a port needs a name"));
                continue;
            }
            if (!Port.isName(p.getName())) {
                out.add(new Violation(
                        at + ".name",
                        quote(p.getName()) + " is not a port name (lower-case letters, digits and single '-',"
                                + " at least one letter, at most " + Port.MAX_NAME + " characters)"));
            } else if (!names.add(p.getName())) {
                out.add(new Violation(
                        at + ".name", quote(p.getName()) + " is used by another port; port names must be unique"));
            }
            inRange(at + ".static", p.getStatic(), out);
            inRange(at + ".to", p.getTo(), out);
            if (p.getStatic() != null) {
                String other = statics.putIfAbsent(p.getStatic(), p.getName());
                if (other != null) {
                    out.add(new Violation(
                            at + ".static", p.getStatic() + " is port " + quote(other) + "'s too; give each its own"));
                }
            }
            if (mode == NetworkMode.HOST && p.getTo() != null && !p.getTo().equals(p.getStatic())) {
                out.add(new Violation(
                        at + ".to",
                        "maps a host port into a bridge network; in host mode a task listens on the host port"
                                + " itself: leave it out or use network mode bridge"));
            }
        }
    }

    private static void services(AllocationSpec spec, List<Violation> out) {
        List<ServicePublication> services = spec.getServices();
        if (services == null) {
            return;
        }
        if (services.size() > ServicePublication.MAX) {
            out.add(new Violation(
                    "spec.services",
                    "has " + services.size() + " entries; at most " + ServicePublication.MAX + " are allowed"));
            return;
        }
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < services.size(); i++) {
            String at = "spec.services[" + i + "]";
            ServicePublication s = services.get(i);
            if (s == null) {
                out.add(new Violation(at, "is empty; a service needs a name and a port"));
                continue;
            }
            if (!dev.drover.api.v1alpha1.Names.isLabel(s.getName())) {
                out.add(new Violation(
                        at + ".name",
                        quote(s.getName()) + " is not a Service name (a DNS-1123 label: lower-case letters, digits"
                                + " and '-', at most 63 characters)"));
            }
            if (spec.getNetwork() == null || spec.getNetwork().port(s.getPort()) == null) {
                out.add(new Violation(
                        at + ".port",
                        quote(s.getPort()) + " is not a port of spec.network.ports; name one of " + portNames(spec)));
            } else if (!seen.add(s.getName() + "\0" + s.getPort())) {
                out.add(new Violation(
                        at, "publishes port " + quote(s.getPort()) + " into Service " + quote(s.getName()) + " twice"));
            }
        }
    }

    /** A check's port given by name must be one of the allocation's. */
    private static void checks(AllocationSpec spec, List<Violation> out) {
        if (spec.getTasks() == null) {
            return;
        }
        for (int i = 0; i < spec.getTasks().size(); i++) {
            Task t = spec.getTasks().get(i);
            if (t == null || t.getChecks() == null) {
                continue;
            }
            for (int j = 0; j < t.getChecks().size(); j++) {
                Check c = t.getChecks().get(j);
                if (c == null || c.getPort() == null || c.getPort().getStrVal() == null) {
                    continue;
                }
                String name = c.getPort().getStrVal();
                if (Port.isName(name)
                        && (spec.getNetwork() == null || spec.getNetwork().port(name) == null)) {
                    out.add(new Violation(
                            "spec.tasks[" + i + "].checks[" + j + "].port",
                            quote(name) + " is not a port of spec.network.ports; name one of " + portNames(spec)
                                    + " or give a number"));
                }
            }
        }
    }

    private static String portNames(AllocationSpec spec) {
        List<String> names = spec.ports().stream().map(Port::getName).toList();
        return names.isEmpty() ? "them (it has none)" : String.join(", ", names);
    }

    private static void inRange(String at, Integer port, List<Violation> out) {
        if (port != null && (port < 1 || port > 65535)) {
            out.add(new Violation(at, port + " is not a port; give 1 to 65535"));
        }
    }

    private static String quote(String s) {
        return UserText.quote(s);
    }
}
