package dev.drover.network;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What the network tests share: the CNI reference plugins' directory (never skipped: a machine without them fails,
 * saying what to install) and commands run, bounded, in a network namespace a test made.
 */
final class Nodes {

    private Nodes() {}

    /** {@code DROVER_CNI_BIN_DIR}, else Debian's {@code /usr/lib/cni}; fails naming the package when it is empty. */
    static Path cniBinDir() {
        String env = System.getenv("DROVER_CNI_BIN_DIR");
        Path dir = Path.of(env == null || env.isBlank() ? "/usr/lib/cni" : env);
        for (String plugin : List.of("bridge", "host-local", "portmap", "loopback")) {
            if (!Files.isExecutable(dir.resolve(plugin))) {
                fail("the CNI reference plugins are not in " + dir + " (no " + plugin + "): install Debian's package"
                        + " containernetworking-plugins, or set DROVER_CNI_BIN_DIR to where they are");
            }
        }
        for (String tool : List.of("iptables", "iptables-save", "ip", "nsenter", "unshare", "curl", "busybox")) {
            if (List.of("/usr/sbin", "/usr/bin", "/sbin", "/bin").stream()
                    .noneMatch(d -> Files.isExecutable(Path.of(d, tool)))) {
                fail(tool + " is not installed; the network tests need iptables, iproute2, util-linux, curl and"
                        + " busybox-static");
            }
        }
        return dir;
    }

    /** Runs {@code argv} in the namespace {@code ns} (null: the test's own), failing the test when it fails. */
    static String run(Path ns, String... argv) throws IOException, InterruptedException {
        BoundedProcess.Outcome o = runQuietly(ns, argv);
        if (o.exit() != 0) {
            fail(String.join(" ", argv) + " exited " + o.exit() + ": " + o.stderr() + o.stdout());
        }
        return o.stdout();
    }

    /** Runs {@code argv} in the namespace {@code ns} (null: the test's own), whatever its end. */
    static BoundedProcess.Outcome runQuietly(Path ns, String... argv) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        if (ns != null) {
            cmd.addAll(List.of("nsenter", "--net=" + ns, "--"));
        }
        cmd.addAll(List.of(argv));
        return BoundedProcess.run(
                cmd, Map.of("PATH", CniPlugins.path()), new byte[0], Duration.ofSeconds(20), 4 * 1024 * 1024);
    }
}
