package dev.drover.bench;

import dev.drover.common.UserText;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Whether the network bench may make its bridge, a veth per allocation and iptables rules where it runs. Only in a
 * namespace that carries nothing: not PID 1's (the machine's own, where {@code /proc} lets it be read), and with no
 * interface up but loopback, which is what {@code unshare --net} gives. Where PID 1's namespace cannot be read (a
 * sandbox without ptrace rights over it) the second rule alone still refuses the machine's namespace: its uplink is up.
 */
final class HostNetworkGuard {

    /** This process's network namespace and the machine's (PID 1's). */
    static final Path SELF = Path.of("/proc/self/ns/net");

    static final Path INIT = Path.of("/proc/1/ns/net");

    private HostNetworkGuard() {}

    /**
     * Why the bench must not run here: empty when {@code self} and {@code init} (links such as
     * {@code net:[4026531840]}) name different namespaces or either cannot be read, and no interface of {@code up} (the
     * namespace's interfaces that are up) is other than {@code lo}; else the reason.
     */
    static Optional<String> refusal(Path self, Path init, List<String> up) {
        String how = " Run it in a namespace of its own, as benchmarks/network-bench.sh does (unshare --net --mount"
                + " --propagation private), or pass " + NetworkBench.TOUCH_HOST.name() + " to run it here anyway";
        String mine = link(self);
        if (mine != null && mine.equals(link(init))) {
            return Optional.of("this runs in the machine's own network namespace (" + UserText.cutEscaped(mine, 60)
                    + ", PID 1's): the bench would make a bridge, veths and iptables rules there." + how);
        }
        List<String> others = up.stream().filter(i -> !i.equals("lo")).toList();
        if (!others.isEmpty()) {
            return Optional.of("this network namespace has " + UserText.cutEscaped(String.join(", ", others), 200)
                    + " up besides lo: it carries traffic (it may be the machine's own), and the bench would make a"
                    + " bridge, veths and iptables rules there." + how);
        }
        return Optional.empty();
    }

    /** The interfaces up in this process's network namespace, as {@code ip -o link show up} lists them. */
    static List<String> interfacesUp() throws IOException, InterruptedException {
        List<String> names = new ArrayList<>();
        for (String line : NetworkCounts.output(List.of("ip", "-o", "link", "show", "up"))
                .lines()
                .toList()) {
            String[] f = line.split(": ", 3); // "2: eth0@if7: <BROADCAST,...>"
            if (f.length == 3) {
                int at = f[1].indexOf('@');
                names.add(at < 0 ? f[1] : f[1].substring(0, at));
            }
        }
        return names;
    }

    private static String link(Path p) {
        try {
            return Files.readSymbolicLink(p).toString();
        } catch (IOException | UnsupportedOperationException e) {
            return null; // not ours to read (PID 1's without ptrace rights): the interfaces decide
        }
    }
}
