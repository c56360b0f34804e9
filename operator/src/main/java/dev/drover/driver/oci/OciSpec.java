package dev.drover.driver.oci;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/**
 * The OCI runtime spec ({@code config.json}) Drover writes for a container task, with the defaults a Pod's container
 * gets from a kubelet's runtime: its own PID, mount, IPC and UTS namespaces (the node's network, or its allocation's),
 * the runtime default capabilities, {@code no_new_privileges}, the kernel's sensitive {@code /proc} and {@code /sys}
 * paths masked or read-only, Drover's seccomp profile, {@code /proc}, {@code /dev}, {@code /dev/pts},
 * {@code /dev/shm}, {@code /dev/mqueue} and a read-only {@code /sys} of its own. A privileged container gets every
 * capability, no seccomp, nothing masked and the host's devices, as a privileged Pod does.
 */
final class OciSpec {

    /** A bind mount from the host into the container. */
    record Bind(String source, String destination, boolean readOnly) {}

    /**
     * What one container is.
     *
     * @param capabilities   the capabilities it holds ({@link Capabilities#of})
     * @param seccomp        whether Drover's profile confines it ({@code seccompProfile: RuntimeDefault})
     * @param cgroupsPath    the cgroup the runtime puts it in (below the task's own)
     */
    record Container(
            List<String> args,
            List<String> env,
            String cwd,
            long uid,
            long gid,
            List<Long> groups,
            List<String> capabilities,
            boolean seccomp,
            boolean privileged,
            boolean readOnlyRoot,
            int shmSizeMB,
            String hostname,
            List<Bind> binds,
            String cgroupsPath,
            String networkNamespace) {}

    static final List<String> MASKED = List.of(
            "/proc/acpi",
            "/proc/asound",
            "/proc/kcore",
            "/proc/keys",
            "/proc/latency_stats",
            "/proc/timer_list",
            "/proc/timer_stats",
            "/proc/sched_debug",
            "/proc/scsi",
            "/sys/firmware",
            "/sys/devices/virtual/powercap");
    static final List<String> READ_ONLY =
            List.of("/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger");

    private OciSpec() {}

    /** The spec for {@code c}, its root file system at {@code rootfs} (relative to the bundle, or absolute). */
    static ObjectNode of(Container c, String rootfs) {
        JsonNodeFactory json = JsonNodeFactory.instance;
        ObjectNode spec = json.objectNode().put("ociVersion", "1.0.2");
        ObjectNode process = spec.putObject("process").put("terminal", false);
        ObjectNode user = process.putObject("user").put("uid", c.uid()).put("gid", c.gid());
        ArrayNode groups = user.putArray("additionalGids");
        c.groups().forEach(groups::add);
        strings(process.putArray("args"), c.args());
        strings(process.putArray("env"), c.env());
        process.put("cwd", c.cwd());
        ObjectNode caps = process.putObject("capabilities");
        for (String set : List.of("bounding", "effective", "permitted")) {
            strings(caps.putArray(set), c.capabilities());
        }
        process.put("noNewPrivileges", !c.privileged());
        spec.putObject("root").put("path", rootfs).put("readonly", c.readOnlyRoot());
        spec.put("hostname", c.hostname());
        ArrayNode mounts = spec.putArray("mounts");
        mount(mounts, "/proc", "proc", "proc", "nosuid", "noexec", "nodev");
        mount(mounts, "/dev", "tmpfs", "tmpfs", "nosuid", "strictatime", "mode=755", "size=65536k");
        mount(
                mounts,
                "/dev/pts",
                "devpts",
                "devpts",
                "nosuid",
                "noexec",
                "newinstance",
                "ptmxmode=0666",
                "mode=0620",
                "gid=5");
        mount(
                mounts,
                "/dev/shm",
                "tmpfs",
                "shm",
                "nosuid",
                "noexec",
                "nodev",
                "mode=1777",
                "size=" + c.shmSizeMB() + "m");
        mount(mounts, "/dev/mqueue", "mqueue", "mqueue", "nosuid", "noexec", "nodev");
        mount(mounts, "/sys", "sysfs", "sysfs", "nosuid", "noexec", "nodev", c.privileged() ? "rw" : "ro");
        for (Bind b : c.binds()) {
            mount(
                    mounts,
                    b.destination(),
                    "bind",
                    b.source(),
                    "rbind",
                    "rprivate",
                    "nosuid",
                    "nodev",
                    b.readOnly() ? "ro" : "rw");
        }
        ObjectNode linux = spec.putObject("linux");
        ArrayNode namespaces = linux.putArray("namespaces");
        for (String ns : List.of("pid", "mount", "ipc", "uts")) {
            namespaces.addObject().put("type", ns);
        }
        if (c.networkNamespace() != null) {
            // the allocation's network, which its tasks share as a Pod's containers do; else the node's
            namespaces.addObject().put("type", "network").put("path", c.networkNamespace());
        }
        linux.put("cgroupsPath", c.cgroupsPath());
        ObjectNode resources = linux.putObject("resources");
        ArrayNode deviceRules = resources.putArray("devices");
        deviceRules.addObject().put("allow", c.privileged()).put("access", "rwm");
        linux.putArray("devices"); // a reserved device's node, by ContainerDevices
        if (!c.privileged()) {
            strings(linux.putArray("maskedPaths"), MASKED);
            strings(linux.putArray("readonlyPaths"), READ_ONLY);
            if (c.seccomp()) {
                linux.set("seccomp", SeccompProfile.forCapabilities(c.capabilities()));
            }
        }
        return spec;
    }

    private static void mount(ArrayNode mounts, String destination, String type, String source, String... options) {
        ObjectNode m = mounts.addObject()
                .put("destination", destination)
                .put("type", type)
                .put("source", source);
        ArrayNode opts = m.putArray("options");
        for (String o : options) {
            opts.add(o);
        }
    }

    private static void strings(ArrayNode array, List<String> values) {
        values.forEach(array::add);
    }
}
