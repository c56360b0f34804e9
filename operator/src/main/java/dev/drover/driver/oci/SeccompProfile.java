package dev.drover.driver.oci;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Drover's {@code RuntimeDefault} seccomp profile, for the OCI runtime: an allow-list; every other system call fails
 * with {@code EPERM}. What it leaves out is what lets a process reach past its container: new namespaces
 * ({@code unshare}, {@code setns}, {@code clone} with a namespace flag), mounts (old and new API), the kernel keyring,
 * modules, BPF, performance counters, kexec, time, reboot, swap, {@code open_by_handle_at}, {@code userfaultfd},
 * io_uring. A capability added to the container brings back the calls that need it ({@code SYS_ADMIN}: mounts and
 * namespaces; {@code SYS_TIME}: the clock; ...), as container runtimes' default profiles do. {@code clone3} answers
 * {@code ENOSYS}, so the C library falls back to {@code clone}, whose flags can be checked.
 */
final class SeccompProfile {

    private static final int EPERM = 1;
    private static final int ENOSYS = 38;
    /** CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET | NEWTIME. */
    private static final long CLONE_NAMESPACES = 0x00020000L
            | 0x02000000L
            | 0x04000000L
            | 0x08000000L
            | 0x10000000L
            | 0x20000000L
            | 0x40000000L
            | 0x00000080L;

    /** What every container may call: {@code seccomp-allowed.txt} beside this class, one name per line. */
    static final List<String> ALLOWED = allowed();

    /** What a capability added to the container brings back. */
    static final Map<String, List<String>> BY_CAPABILITY = Map.of(
            "CAP_SYS_ADMIN",
            List.of(
                    "mount",
                    "umount",
                    "umount2",
                    "unshare",
                    "setns",
                    "pivot_root",
                    "fsopen",
                    "fsconfig",
                    "fsmount",
                    "fspick",
                    "open_tree",
                    "move_mount",
                    "mount_setattr",
                    "quotactl",
                    "quotactl_fd",
                    "lookup_dcookie",
                    "perf_event_open",
                    "fanotify_init",
                    "bpf",
                    "open_by_handle_at"),
            "CAP_SYS_TIME",
            List.of(
                    "settimeofday",
                    "stime",
                    "clock_settime",
                    "clock_settime64",
                    "adjtimex",
                    "clock_adjtime",
                    "clock_adjtime64"),
            "CAP_SYS_MODULE",
            List.of("init_module", "finit_module", "delete_module"),
            "CAP_SYS_BOOT",
            List.of("reboot"),
            "CAP_SYS_PACCT",
            List.of("acct"),
            "CAP_SYS_RAWIO",
            List.of("iopl", "ioperm"),
            "CAP_SYSLOG",
            List.of("syslog"),
            "CAP_SYS_TTY_CONFIG",
            List.of("vhangup"),
            "CAP_BPF",
            List.of("bpf"),
            "CAP_PERFMON",
            List.of("perf_event_open"));

    private SeccompProfile() {}

    private static List<String> allowed() {
        try (InputStream in = SeccompProfile.class.getResourceAsStream("seccomp-allowed.txt")) {
            if (in == null) {
                throw new IllegalStateException("seccomp-allowed.txt is missing from the agent's jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8)
                    .lines()
                    .map(String::strip)
                    .filter(l -> !l.isEmpty() && !l.startsWith("#"))
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read seccomp-allowed.txt", e);
        }
    }

    /** The profile for a container holding {@code capabilities}, as the OCI runtime spec's {@code linux.seccomp}. */
    static ObjectNode forCapabilities(List<String> capabilities) {
        JsonNodeFactory json = JsonNodeFactory.instance;
        ObjectNode profile = json.objectNode();
        profile.put("defaultAction", "SCMP_ACT_ERRNO").put("defaultErrnoRet", EPERM);
        ArrayNode arches = profile.putArray("architectures");
        for (String a :
                List.of("SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32", "SCMP_ARCH_AARCH64", "SCMP_ARCH_ARM")) {
            arches.add(a);
        }
        Set<String> allowed = new LinkedHashSet<>(ALLOWED);
        boolean sysAdmin = capabilities.contains("CAP_SYS_ADMIN");
        for (String c : capabilities) {
            allowed.addAll(BY_CAPABILITY.getOrDefault(c, List.of()));
        }
        ArrayNode syscalls = profile.putArray("syscalls");
        ArrayNode names = syscalls.addObject().put("action", "SCMP_ACT_ALLOW").putArray("names");
        new ArrayList<>(allowed).forEach(names::add);
        if (sysAdmin) {
            syscalls.addObject()
                    .put("action", "SCMP_ACT_ALLOW")
                    .putArray("names")
                    .add("clone")
                    .add("clone3");
        } else {
            ObjectNode clone = syscalls.addObject().put("action", "SCMP_ACT_ALLOW");
            clone.putArray("names").add("clone");
            clone.putArray("args")
                    .addObject()
                    .put("index", 0)
                    .put("value", CLONE_NAMESPACES)
                    .put("valueTwo", 0)
                    .put("op", "SCMP_CMP_MASKED_EQ");
            ObjectNode clone3 =
                    syscalls.addObject().put("action", "SCMP_ACT_ERRNO").put("errnoRet", ENOSYS);
            clone3.putArray("names").add("clone3");
        }
        return profile;
    }
}
