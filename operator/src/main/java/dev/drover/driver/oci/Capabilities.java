package dev.drover.driver.oci;

import dev.drover.common.UserText;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The Linux capabilities a container's process holds: the set container runtimes give by default (the one a Pod gets
 * from containerd or CRI-O), with {@code capAdd} added and {@code capDrop} taken away, as a Pod's
 * {@code securityContext.capabilities} works; names with or without {@code CAP_}, any case, and {@code ALL}.
 */
final class Capabilities {

    /** Every capability of Linux 6.x, in number order. */
    static final List<String> ALL = List.of(
            "CAP_CHOWN",
            "CAP_DAC_OVERRIDE",
            "CAP_DAC_READ_SEARCH",
            "CAP_FOWNER",
            "CAP_FSETID",
            "CAP_KILL",
            "CAP_SETGID",
            "CAP_SETUID",
            "CAP_SETPCAP",
            "CAP_LINUX_IMMUTABLE",
            "CAP_NET_BIND_SERVICE",
            "CAP_NET_BROADCAST",
            "CAP_NET_ADMIN",
            "CAP_NET_RAW",
            "CAP_IPC_LOCK",
            "CAP_IPC_OWNER",
            "CAP_SYS_MODULE",
            "CAP_SYS_RAWIO",
            "CAP_SYS_CHROOT",
            "CAP_SYS_PTRACE",
            "CAP_SYS_PACCT",
            "CAP_SYS_ADMIN",
            "CAP_SYS_BOOT",
            "CAP_SYS_NICE",
            "CAP_SYS_RESOURCE",
            "CAP_SYS_TIME",
            "CAP_SYS_TTY_CONFIG",
            "CAP_MKNOD",
            "CAP_LEASE",
            "CAP_AUDIT_WRITE",
            "CAP_AUDIT_CONTROL",
            "CAP_SETFCAP",
            "CAP_MAC_OVERRIDE",
            "CAP_MAC_ADMIN",
            "CAP_SYSLOG",
            "CAP_WAKE_ALARM",
            "CAP_BLOCK_SUSPEND",
            "CAP_AUDIT_READ",
            "CAP_PERFMON",
            "CAP_BPF",
            "CAP_CHECKPOINT_RESTORE");

    /** What a container holds unless told otherwise: the container runtimes' default set. */
    static final List<String> DEFAULT = List.of(
            "CAP_CHOWN",
            "CAP_DAC_OVERRIDE",
            "CAP_FSETID",
            "CAP_FOWNER",
            "CAP_MKNOD",
            "CAP_NET_RAW",
            "CAP_SETGID",
            "CAP_SETUID",
            "CAP_SETFCAP",
            "CAP_SETPCAP",
            "CAP_NET_BIND_SERVICE",
            "CAP_SYS_CHROOT",
            "CAP_KILL",
            "CAP_AUDIT_WRITE");

    private Capabilities() {}

    /** The default set with {@code add} added and {@code drop} removed ({@code ALL} in either means all). */
    static List<String> of(List<String> add, List<String> drop) {
        Set<String> held = new LinkedHashSet<>(DEFAULT);
        if (drop.stream().anyMatch(c -> c.equalsIgnoreCase("ALL"))) {
            held.clear();
        } else {
            drop.forEach(c -> held.remove(canonical(c)));
        }
        if (add.stream().anyMatch(c -> c.equalsIgnoreCase("ALL"))) {
            held.addAll(ALL);
        } else {
            add.forEach(c -> held.add(canonical(c)));
        }
        List<String> ordered = new ArrayList<>();
        for (String c : ALL) {
            if (held.contains(c)) {
                ordered.add(c);
            }
        }
        return List.copyOf(ordered);
    }

    /** What is wrong with {@code name} as a capability, or null when it names one (or {@code ALL}). */
    static String problem(String name) {
        if (name.equalsIgnoreCase("ALL") || ALL.contains(canonical(name))) {
            return null;
        }
        return UserText.quote(name) + " is not a Linux capability (e.g. NET_ADMIN, SYS_PTRACE, or ALL)";
    }

    private static String canonical(String name) {
        String upper = name.toUpperCase(Locale.ROOT);
        return upper.startsWith("CAP_") ? upper : "CAP_" + upper;
    }
}
