package dev.drover.driver.oci;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.network.NetNs;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The spec Drover writes, run by the real runc: the container holds the runtime default capabilities and no more,
 * cannot make namespaces, mounts or keys (seccomp), sees the kernel's sensitive files masked, and keeps a read-only
 * root read-only.
 */
class RuncContainerTest {

    static final Path RUNC = Path.of("/usr/sbin/runc");
    /** CapEff of the runtime default set, as /proc/PID/status prints it. */
    static final String DEFAULT_CAPS = "00000000a80425fb";

    @TempDir
    static Path dir;

    private static Path rootfs;

    @BeforeAll
    static void rootfs() throws Exception {
        requireRunc();
        rootfs = Files.createDirectories(dir.resolve("rootfs/bin"));
        Files.copy(Path.of("/bin/busybox"), rootfs.resolve("busybox"));
        for (String applet : List.of("sh", "cat", "grep", "id", "unshare", "mount", "touch", "echo", "head")) {
            Files.createSymbolicLink(rootfs.resolve(applet), Path.of("busybox"));
        }
        rootfs = rootfs.getParent();
        Files.createDirectories(rootfs.resolve("proc"));
        Files.createDirectories(rootfs.resolve("mnt"));
    }

    /** Fails, saying how to get it, where this machine has no runc. */
    static void requireRunc() {
        if (!Files.isExecutable(RUNC)) {
            fail(RUNC + " is missing: install Debian's runc package (.ci/tools does)");
        }
    }

    /** What the container printed, and its exit code. */
    record Run(int exit, String output) {}

    private static Run run(String script, boolean readOnlyRoot) throws Exception {
        return run(script, readOnlyRoot, 1000);
    }

    private static Run run(String script, boolean readOnlyRoot, long uid) throws Exception {
        return run(script, readOnlyRoot, uid, null);
    }

    private static Run run(String script, boolean readOnlyRoot, long uid, String netns) throws Exception {
        Path bundle = Files.createDirectories(dir.resolve("bundle-" + UUID.randomUUID()));
        String id = "drover-test-" + UUID.randomUUID();
        OciSpec.Container c = new OciSpec.Container(
                List.of("/bin/sh", "-c", script),
                List.of("PATH=/bin"),
                "/",
                uid,
                uid,
                List.of(),
                Capabilities.DEFAULT,
                true,
                false,
                readOnlyRoot,
                64,
                "task",
                List.of(),
                ownCgroup() + "/" + id,
                netns);
        Files.write(
                bundle.resolve("config.json"), new ObjectMapper().writeValueAsBytes(OciSpec.of(c, rootfs.toString())));
        Path state = Files.createDirectories(dir.resolve("runc-state"));
        Process p = new ProcessBuilder(
                        RUNC.toString(), "--root", state.toString(), "run", "--bundle", bundle.toString(), id)
                .redirectErrorStream(true)
                .start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail("runc did not end: " + out);
        }
        return new Run(p.exitValue(), out);
    }

    /** This process's deepest cgroup (v1 controllers may differ): the container's goes below it. */
    static String ownCgroup() throws Exception {
        String deepest = "";
        for (String line : Files.readAllLines(Path.of("/proc/self/cgroup"))) {
            String path = line.substring(line.indexOf(':', line.indexOf(':') + 1) + 1);
            if (path.length() > deepest.length()) {
                deepest = path;
            }
        }
        return deepest.equals("/") ? "" : deepest;
    }

    @Test
    void theContainerRunsAsItsUserAndPassesItsExitCodeOn() throws Exception {
        Run r = run("id; exit 7", false);
        assertThat(r.exit()).as(r.output()).isEqualTo(7);
        assertThat(r.output()).contains("uid=1000 gid=1000");
    }

    @Test
    void theContainerHoldsTheRuntimeDefaultCapabilitiesAndNoNewPrivileges() throws Exception {
        Run r = run("grep -E 'CapBnd|NoNewPrivs|Seccomp:' /proc/self/status", false);
        assertThat(r.output())
                .contains("CapBnd:\t" + DEFAULT_CAPS)
                .contains("NoNewPrivs:\t1")
                .contains("Seccomp:\t2");
    }

    @Test
    void evenRootInTheContainerCannotMakeNamespacesOrMount() throws Exception {
        for (String attack : List.of("unshare -m true", "unshare -U true", "unshare -n true")) {
            Run r = run(attack + "; echo exit=$?", false, 0);
            assertThat(r.output())
                    .as(attack)
                    .contains("Operation not permitted")
                    .doesNotContain("exit=0");
        }
        Run mount = run("mount -t tmpfs x /mnt; echo exit=$?", false, 0);
        assertThat(mount.output()).contains("permission denied").contains("exit=1");
    }

    @Test
    void theKernelsSensitiveFilesAreMaskedAndAReadOnlyRootStaysSo() throws Exception {
        Run masked = run("head -c 16 /proc/kcore | wc -c; echo x > /proc/sysrq-trigger; echo sysrq=$?", false);
        assertThat(masked.output()).contains("sysrq=1");
        Run ro = run("touch /new; echo touched=$?", true);
        assertThat(ro.output()).contains("Read-only file system").contains("touched=1");
    }

    @Test
    void containerJoinsTheNetworkNamespaceItIsGiven() throws Exception {
        NetNs namespaces = NetNs.in(dir.resolve("netns"));
        Path netns = namespaces.create("runc-test");
        try {
            Run joined = run("cat /proc/net/dev", false, 1000, netns.toString());
            assertThat(joined.exit()).isZero();
            assertThat(joined.output()
                            .lines()
                            .filter(l -> l.contains(":"))
                            .map(l -> l.strip().split(":")[0]))
                    .as("a fresh network namespace has loopback alone")
                    .containsExactly("lo");
            Run own = run("cat /proc/net/dev", false);
            assertThat(own.output()).as("without one, the node's network").isNotEqualTo(joined.output());
        } finally {
            namespaces.remove(netns);
        }
    }
}
