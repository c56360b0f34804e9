package dev.drover.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * What the allocations' networks have made in the bench's network namespace, counted from the system's own tools:
 * veths ({@code ip -o link show type veth}), iptables rules ({@code iptables-save} and {@code ip6tables-save}, the
 * {@code -A} lines), the rules naming one of the allocations (the plugins put its container id in each rule's
 * comment), network namespaces mounted under {@code netnsDir}, and host-local's leases in {@code leaseDir}.
 */
record NetworkCounts(int veths, int rules, int rulesOfAllocations, int namespaces, int leases) {

    /** The most bytes of one tool's output read. */
    private static final int MAX_OUTPUT = 64 * 1024 * 1024;

    static NetworkCounts read(Path netnsDir, Path leaseDir, Collection<String> containerIds)
            throws IOException, InterruptedException {
        List<String> rules = new ArrayList<>();
        for (String save : List.of("iptables-save", "ip6tables-save")) {
            output(List.of(save)).lines().filter(l -> l.startsWith("-A ")).forEach(rules::add);
        }
        int ofAllocations = (int) rules.stream()
                .filter(r -> containerIds.stream().anyMatch(r::contains))
                .count();
        int veths = (int) output(List.of("ip", "-o", "link", "show", "type", "veth"))
                .lines()
                .count();
        String dir = netnsDir.toRealPath() + "/";
        int namespaces = (int) Files.readAllLines(Path.of("/proc/self/mountinfo")).stream()
                .map(l -> l.split(" "))
                .filter(f -> f.length > 4 && f[4].startsWith(dir))
                .count();
        int leases = 0;
        if (Files.isDirectory(leaseDir)) {
            try (Stream<Path> files = Files.list(leaseDir)) {
                leases = (int) files.map(p -> p.getFileName().toString())
                        .filter(n -> !n.equals("lock") && !n.startsWith("last_reserved_ip"))
                        .count();
            }
        }
        return new NetworkCounts(veths, rules.size(), ofAllocations, namespaces, leases);
    }

    /** {@code command}'s stdout; it must exit 0 within 30 seconds. */
    static String output(List<String> command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command)
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                .start();
        byte[] out;
        try (var in = p.getInputStream()) {
            out = in.readNBytes(MAX_OUTPUT);
        }
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly().waitFor();
            throw new IOException(String.join(" ", command) + " ran past 30 s");
        }
        if (p.exitValue() != 0) {
            throw new IOException(String.join(" ", command) + " failed (exit status " + p.exitValue() + ")");
        }
        return new String(out, StandardCharsets.UTF_8);
    }
}
