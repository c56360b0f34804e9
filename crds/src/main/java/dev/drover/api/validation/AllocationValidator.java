package dev.drover.api.validation;

import dev.drover.api.Signals;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.DeviceRequest;
import dev.drover.api.v1alpha1.EnvVar;
import dev.drover.api.v1alpha1.EphemeralDisk;
import dev.drover.api.v1alpha1.Names;
import dev.drover.api.v1alpha1.RestartMode;
import dev.drover.api.v1alpha1.RestartPolicy;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.Users;
import dev.drover.api.v1alpha1.Volume;
import dev.drover.common.Durations;
import dev.drover.common.UserText;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The Allocation rules of the CRD (schema and CEL) as Java, for API servers that
 * do not enforce them all. Returns every violation, never only the first: a user
 * fixing a spec wants the whole list at once. Driver configs are not checked
 * here; each driver checks its own.
 */
public final class AllocationValidator {

    public static final int MAX_TASKS = 64;
    public static final int MAX_ENV = 256;
    public static final int MAX_DEVICE_REQUESTS = 16;
    /** The most CPU a task may ask for: a thousand cores, what a cgroup limit can name. */
    public static final int MAX_CPU_MILLIS = 1_000_000;

    private AllocationValidator() {}

    /** Every violation of {@code allocation}'s spec; empty when it is valid. */
    public static List<Violation> validate(Allocation allocation) {
        List<Violation> out = new ArrayList<>();
        AllocationSpec spec = allocation.getSpec();
        if (spec == null) {
            out.add(new Violation("spec", "is required"));
            return out;
        }
        String self = allocation.getMetadata() == null
                ? null
                : allocation.getMetadata().getName();
        validateSpec(spec, self, out);
        return out;
    }

    /** As {@link #validate(Allocation)} for a bare spec; {@code name} (may be null) is the allocation's own name. */
    public static List<Violation> validate(AllocationSpec spec, String name) {
        List<Violation> out = new ArrayList<>();
        validateSpec(spec, name, out);
        return out;
    }

    private static void validateSpec(AllocationSpec spec, String self, List<Violation> out) {
        if (spec.getNodeName() == null || spec.getNodeName().isBlank()) {
            out.add(new Violation(
                    "spec.nodeName", "is required: the name of the node whose agent runs this allocation"));
        } else if (!Names.isSubdomain(spec.getNodeName())) {
            out.add(new Violation(
                    "spec.nodeName",
                    quote(spec.getNodeName()) + " is not a valid node name"
                            + " (lower-case letters, digits, '-' and '.', at most 253 characters)"));
        }
        String previous = spec.getPreviousAllocation();
        if (previous != null) {
            if (!Names.isSubdomain(previous)) {
                out.add(new Violation(
                        "spec.previousAllocation",
                        quote(previous) + " is not a valid allocation name (lower-case letters, digits, '-' and '.')"));
            } else if (previous.equals(self)) {
                out.add(new Violation(
                        "spec.previousAllocation", "names this allocation itself; name the one it replaces"));
            }
        }
        validateDisk(spec.getEphemeralDisk(), out);
        if (spec.getRestartPolicy() != null) {
            validatePolicy("spec.restartPolicy", spec.getRestartPolicy(), out);
            validateEffective("spec.restartPolicy", spec, null, out);
        }
        CredentialRules.serviceAccountName(spec.getServiceAccountName(), out);
        CredentialRules.imagePullSecrets(spec.getImagePullSecrets(), out);
        validateVolumes(spec.getVolumes(), out);
        validateTasks(spec, out);
        NetworkRules.validate(spec, out);
    }

    private static void validateDisk(EphemeralDisk disk, List<Violation> out) {
        if (disk != null && disk.getSizeMB() != null && disk.getSizeMB() < 1) {
            out.add(new Violation(
                    "spec.ephemeralDisk.sizeMB", disk.getSizeMB() + " is too small; give at least 1 (MB)"));
        }
    }

    private static void validateVolumes(List<Volume> volumes, List<Violation> out) {
        if (volumes == null) {
            return;
        }
        if (volumes.size() > AllocationSpec.MAX_VOLUMES) {
            out.add(new Violation(
                    "spec.volumes",
                    "has " + volumes.size() + " volumes; at most " + AllocationSpec.MAX_VOLUMES + " are allowed"));
            return;
        }
        Set<String> names = new HashSet<>();
        for (int i = 0; i < volumes.size(); i++) {
            String path = "spec.volumes[" + i + "]";
            Volume v = volumes.get(i);
            if (v == null) {
                out.add(new Violation(path, "is empty; a volume needs a name and a hostVolume"));
                continue;
            }
            if (!Names.isLabel(v.getName())) {
                out.add(new Violation(
                        path + ".name",
                        quote(v.getName()) + " is not a DNS-1123 label (lower-case letters, digits and '-', at most"
                                + " 63 characters)"));
            } else if (!names.add(v.getName())) {
                out.add(new Violation(
                        path + ".name",
                        quote(v.getName()) + " is used by another volume; volume names must be unique"));
            }
            if (!Names.isLabel(v.getHostVolume())) {
                out.add(new Violation(
                        path + ".hostVolume",
                        quote(v.getHostVolume()) + " is not a host volume name (a DNS-1123 label, as the agent's"
                                + " hostVolumes names them)"));
            }
        }
    }

    private static void validateTasks(AllocationSpec spec, List<Violation> out) {
        List<Task> tasks = spec.getTasks();
        if (tasks == null || tasks.isEmpty()) {
            out.add(new Violation("spec.tasks", "needs at least one task"));
            return;
        }
        if (tasks.size() > MAX_TASKS) {
            out.add(new Violation(
                    "spec.tasks", "has " + tasks.size() + " tasks; at most " + MAX_TASKS + " are allowed"));
        }
        Set<String> names = new HashSet<>();
        List<String> leaders = new ArrayList<>();
        for (int i = 0; i < tasks.size(); i++) {
            String path = "spec.tasks[" + i + "]";
            Task task = tasks.get(i);
            if (task == null) {
                out.add(new Violation(path, "is empty; a task needs at least a name and a driver"));
                continue;
            }
            if (task.getName() != null && !names.add(task.getName())) {
                out.add(new Violation(
                        path + ".name", quote(task.getName()) + " is used by another task; task names must be unique"));
            }
            if (task.isLeaderTask()) {
                leaders.add(task.getName());
            }
            validateTask(path, task, out);
            if (task.getRestartPolicy() != null) {
                validateEffective(path + ".restartPolicy", spec, task.getRestartPolicy(), out);
            }
        }
        if (leaders.size() > 1) {
            out.add(new Violation(
                    "spec.tasks",
                    "has " + leaders.size() + " leaders " + leaders + "; at most one task may be the leader"));
        }
    }

    private static void validateTask(String path, Task task, List<Violation> out) {
        String name = task.getName();
        if (name == null || name.isEmpty()) {
            out.add(new Violation(path + ".name", "is required"));
        } else if (!Names.isLabel(name)) {
            out.add(
                    new Violation(
                            path + ".name",
                            quote(name) + " is not a DNS-1123 label (lower-case letters, digits"
                                    + " and '-', starting and ending with a letter or digit, at most 63 characters); it names the task's directory"));
        }
        if (task.getDriver() == null || task.getDriver().isBlank()) {
            out.add(new Violation(path + ".driver", "is required (mock, raw_exec, exec or oci)"));
        }
        validateEnv(path, task.getEnv(), out);
        CredentialRules.validate(path, task, out);
        CheckRules.validate(path, task, out);
        if (task.getUser() != null && !Users.isValid(task.getUser())) {
            out.add(new Violation(
                    path + ".user",
                    quote(task.getUser()) + " is not a user name (lower-case letters, digits, '_' and '-', starting"
                            + " with a letter or '_', at most " + Users.MAX_LENGTH + ") or a uid (at most "
                            + Users.MAX_UID + ")"));
        }
        if (task.getLifecycle() != null && task.getLifecycle().getHook() == null) {
            out.add(new Violation(
                    path + ".lifecycle.hook", "is required when lifecycle is given (Prestart, Poststart or Poststop)"));
        }
        if (task.getRestartPolicy() != null) {
            validatePolicy(path + ".restartPolicy", task.getRestartPolicy(), out);
        }
        duration(path + ".killTimeout", task.getKillTimeout(), out);
        duration(path + ".shutdownDelay", task.getShutdownDelay(), out);
        if (task.getKillSignal() != null && !Signals.isKnown(task.getKillSignal())) {
            out.add(new Violation(
                    path + ".killSignal",
                    quote(task.getKillSignal()) + " is not a signal name (e.g. SIGTERM, SIGINT)"));
        }
        if (task.getResources() != null) {
            var r = task.getResources();
            if (r.getCpuMillis() != null && r.getCpuMillis() < 0) {
                out.add(new Violation(path + ".resources.cpuMillis", r.getCpuMillis() + " is negative"));
            }
            if (r.getMemoryMB() != null && r.getMemoryMB() < 0) {
                out.add(new Violation(path + ".resources.memoryMB", r.getMemoryMB() + " is negative"));
            }
            if (Boolean.TRUE.equals(r.getCpuHardLimit()) && (r.getCpuMillis() == null || r.getCpuMillis() <= 0)) {
                out.add(new Violation(
                        path + ".resources.cpuHardLimit", "needs cpuMillis above 0: it makes cpuMillis a hard quota"));
            }
            if (r.getCpuMillis() != null && r.getCpuMillis() > MAX_CPU_MILLIS) {
                out.add(new Violation(
                        path + ".resources.cpuMillis",
                        r.getCpuMillis() + " is more than " + MAX_CPU_MILLIS + " (a thousand cores)"));
            }
            validateDevices(path + ".resources.devices", r.getDevices(), out);
        }
    }

    private static void validateEnv(String path, List<EnvVar> env, List<Violation> out) {
        if (env == null) {
            return;
        }
        if (env.size() > MAX_ENV) {
            out.add(new Violation(
                    path + ".env", "has " + env.size() + " variables; at most " + MAX_ENV + " are allowed"));
        }
        for (int j = 0; j < env.size(); j++) {
            EnvVar e = env.get(j);
            if (e == null || e.getName() == null || !e.getName().matches(Names.ENV_NAME)) {
                out.add(new Violation(
                        path + ".env[" + j + "].name",
                        quote(e == null ? null : e.getName())
                                + " is not a variable name (letters, digits and '_', not starting with a digit)"));
            }
        }
    }

    private static void validateDevices(String path, List<DeviceRequest> devices, List<Violation> out) {
        if (devices == null) {
            return;
        }
        if (devices.size() > MAX_DEVICE_REQUESTS) {
            out.add(new Violation(
                    path, "has " + devices.size() + " requests; at most " + MAX_DEVICE_REQUESTS + " are allowed"));
        }
        for (int k = 0; k < devices.size(); k++) {
            DeviceRequest d = devices.get(k);
            String at = path + "[" + k + "]";
            if (d == null || d.getName() == null || !d.getName().matches(Names.DEVICE_NAME)) {
                out.add(
                        new Violation(
                                at + ".name",
                                quote(d == null ? null : d.getName())
                                        + " is not a device name; use <type>, <vendor>/<type> or <vendor>/<type>/<model>, e.g. nvidia/gpu"));
            }
            if (d != null && d.getCount() != null && d.getCount() < 1) {
                out.add(new Violation(at + ".count", d.getCount() + " is too small; ask for at least 1 device"));
            }
        }
    }

    /** The restart policy rules of docs/allocations.md, on the fields given (unset ones take valid defaults). */
    private static void validatePolicy(String path, RestartPolicy p, List<Violation> out) {
        Duration interval = duration(path + ".interval", p.getInterval(), out);
        duration(path + ".delay", p.getDelay(), out); // reported if malformed; the cross-field rules are below
        Integer attempts = p.getAttempts();
        if (attempts != null && attempts < 0) {
            out.add(new Violation(path + ".attempts", attempts + " is negative; use 0 for no restarts"));
        }
        if (interval != null && interval.compareTo(RestartPolicy.MIN_INTERVAL) < 0) {
            out.add(new Violation(path + ".interval", quote(p.getInterval()) + " is shorter than the minimum of 5s"));
        }
    }

    /**
     * The rules that span fields, on the policy a task really gets (its fields over the
     * allocation's over the type's defaults), so a policy that only sets {@code interval: 10s}
     * is caught against the default attempts and delay. Skipped when a duration is malformed:
     * that is reported already.
     */
    private static void validateEffective(String path, AllocationSpec spec, RestartPolicy task, List<Violation> out) {
        RestartPolicy.Resolved p;
        try {
            p = RestartPolicy.resolve(spec.effectiveType(), spec.getRestartPolicy(), task);
        } catch (IllegalArgumentException malformed) {
            return;
        }
        if (p.attempts() == 0 && p.mode() == RestartMode.Delay) {
            out.add(new Violation(path + ".mode", "Delay needs attempts > 0; with attempts 0 use mode Fail"));
        }
        if (p.attempts() > 0 && p.delay().multipliedBy(p.attempts()).compareTo(p.interval()) > 0) {
            out.add(new Violation(
                    path,
                    "attempts × delay (" + p.attempts() + " × " + Durations.format(p.delay())
                            + ") is longer than the interval " + Durations.format(p.interval())
                            + "; lengthen the interval, or lower attempts or delay"));
        }
    }

    private static Duration duration(String path, String value, List<Violation> out) {
        if (value == null) {
            return null;
        }
        try {
            return Durations.parse(value);
        } catch (IllegalArgumentException e) {
            out.add(new Violation(path, e.getMessage()));
            return null;
        }
    }

    private static String quote(String s) {
        return UserText.quote(s);
    }
}
