package dev.drover.driver.oci;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.drover.common.UserText;
import dev.drover.devices.cdi.CdiDeviceNode;
import dev.drover.devices.cdi.CdiException;
import dev.drover.devices.cdi.CdiHook;
import dev.drover.devices.cdi.CdiMount;
import dev.drover.devices.cdi.CdiRegistry;
import dev.drover.devices.cdi.ContainerEdits;
import dev.drover.devices.cdi.HostDevices;
import dev.drover.driver.DriverStartException;
import dev.drover.driver.TaskAttachments;
import dev.drover.driver.TaskDeviceNode;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A container's devices: the edits of the CDI specs that describe its task's reserved devices ({@link CdiRegistry}),
 * and the device nodes its device plugins lend it directly, applied to the {@code config.json} {@link OciSpec} built:
 * each device node in {@code linux.devices} with a device cgroup rule that allows just it, the specs' variables over
 * the process's (a task cannot change them), their bind mounts ({@code nosuid} always) and their hooks.
 */
final class ContainerDevices {

    /** Drover's own mount points in a container: a device's mount may neither cover one nor go under one. */
    private static final List<String> OWN_TREES = List.of("/alloc", "/local", "/secrets", "/tmp");

    private static final List<String> OWN_MOUNTS = List.of("/dev", "/dev/pts", "/dev/shm", "/dev/mqueue");

    private ContainerDevices() {}

    /** What {@code attachments} lend the container, resolved now; an unknown CDI name fails the start. */
    static ContainerEdits resolve(TaskAttachments attachments, CdiRegistry cdi) throws DriverStartException {
        try {
            ContainerEdits edits = cdi.resolve(attachments.cdiDevices());
            List<CdiDeviceNode> nodes = new ArrayList<>();
            for (TaskDeviceNode n : attachments.deviceNodes()) {
                nodes.add(HostDevices.complete(new CdiDeviceNode(
                        n.path(), n.hostPath(), null, null, null, null, n.permissions(), null, null)));
            }
            return edits.plus(new ContainerEdits(List.of(), nodes, List.of(), List.of()));
        } catch (CdiException e) {
            throw new DriverStartException("cannot give the container its devices: " + e.getMessage(), false, e);
        }
    }

    /** Applies {@code edits} to {@code spec}, whose device nodes are complete ({@link #resolve}). */
    static void apply(ObjectNode spec, ContainerEdits edits) throws DriverStartException {
        if (edits.isEmpty()) {
            return;
        }
        env((ArrayNode) spec.path("process").path("env"), edits.env());
        ObjectNode linux = (ObjectNode) spec.path("linux");
        ArrayNode devices = (ArrayNode) linux.path("devices");
        ArrayNode rules = (ArrayNode) linux.path("resources").path("devices");
        Set<String> paths = new HashSet<>();
        for (CdiDeviceNode d : edits.deviceNodes()) {
            if (!d.path().startsWith("/dev/")) {
                throw new DriverStartException(
                        "device node " + UserText.quote(d.path()) + " is not under /dev/", false);
            }
            if (!paths.add(d.path())) {
                continue; // two devices sharing a node (a control device): one node, one rule
            }
            String type = String.valueOf(d.type());
            devices.addObject()
                    .put("path", d.path())
                    .put("type", type)
                    .put("major", d.major())
                    .put("minor", d.minor())
                    .put("fileMode", d.fileMode())
                    .put("uid", d.uid())
                    .put("gid", d.gid());
            rules.addObject()
                    .put("allow", true)
                    .put("type", type)
                    .put("major", d.major())
                    .put("minor", d.minor())
                    .put("access", d.permissions());
        }
        ArrayNode mounts = (ArrayNode) spec.path("mounts");
        for (CdiMount m : edits.mounts()) {
            mount(mounts, m);
        }
        for (CdiHook h : edits.hooks()) {
            ObjectNode hooks = spec.has("hooks") ? (ObjectNode) spec.get("hooks") : spec.putObject("hooks");
            ArrayNode at = hooks.has(h.hookName()) ? (ArrayNode) hooks.get(h.hookName()) : hooks.putArray(h.hookName());
            ObjectNode hook = at.addObject().put("path", h.path());
            h.args().forEach(hook.putArray("args")::add);
            if (!h.env().isEmpty()) {
                h.env().forEach(hook.putArray("env")::add);
            }
            if (h.timeout() != null) {
                hook.put("timeout", h.timeout());
            }
        }
    }

    private static void env(ArrayNode env, List<String> edits) {
        Map<String, String> byName = new LinkedHashMap<>();
        for (JsonNode kv : env) {
            byName.put(name(kv.asText()), kv.asText());
        }
        for (String kv : edits) {
            byName.put(name(kv), kv);
        }
        env.removeAll();
        byName.values().forEach(env::add);
    }

    private static String name(String kv) {
        int eq = kv.indexOf('=');
        return eq < 0 ? kv : kv.substring(0, eq);
    }

    private static void mount(ArrayNode mounts, CdiMount m) throws DriverStartException {
        String to = m.containerPath();
        boolean own =
                OWN_MOUNTS.contains(to) || OWN_TREES.stream().anyMatch(p -> to.equals(p) || to.startsWith(p + "/"));
        if (own) {
            throw new DriverStartException(
                    "a device's mount of " + UserText.quote(m.hostPath()) + " at " + UserText.quote(to)
                            + " would cover Drover's own " + to + " in the container",
                    false);
        }
        List<String> options = new ArrayList<>(m.options());
        if (!options.contains("bind") && !options.contains("rbind")) {
            options.add("bind");
        }
        if (!options.contains("nosuid")) {
            options.add("nosuid");
        }
        ObjectNode mount =
                mounts.addObject().put("destination", to).put("type", "bind").put("source", m.hostPath());
        options.forEach(mount.putArray("options")::add);
    }
}
