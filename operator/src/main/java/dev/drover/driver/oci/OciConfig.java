package dev.drover.driver.oci;

import dev.drover.common.ConfigReader;
import dev.drover.common.UserText;
import dev.drover.image.ImageReference;
import dev.drover.image.PullPolicy;
import dev.drover.volumes.VolumeMounts;
import java.util.List;
import java.util.Map;

/**
 * An {@code oci} task's {@code config}, read and checked: the image and how it is pulled, what replaces the image's
 * process ({@code command}, {@code args}, {@code workingDir}), and the container's security ({@code capAdd},
 * {@code capDrop}, {@code seccompProfile}, {@code privileged}, {@code readOnlyRootFilesystem}, {@code shmSizeMB}),
 * and where volumes go ({@code volumeMounts}, checked here, bound from what the task is lent at its start).
 *
 * @param command replaces the image's Entrypoint (and its Cmd unless {@code args} is given); null to keep them
 * @param args    replaces the image's Cmd; null to keep it
 */
record OciConfig(
        ImageReference image,
        PullPolicy pullPolicy,
        String command,
        List<String> args,
        String workingDir,
        boolean readOnlyRootFilesystem,
        List<String> capAdd,
        List<String> capDrop,
        boolean seccomp,
        boolean privileged,
        int shmSizeMB) {

    static final int DEFAULT_SHM_MB = 64;
    static final int MAX_SHM_MB = 64 * 1024;

    /** What the agent lets containers ask for. */
    record Allowed(boolean privileged, boolean unconfined) {}

    /** Reads {@code raw}; what is wrong goes to {@code problems}, each naming its {@code config.} key. */
    static OciConfig read(Map<String, Object> raw, Allowed allowed, List<String> problems) {
        ConfigReader r = new ConfigReader(raw);
        String image = r.string("image");
        ImageReference ref = null;
        if (image == null || image.isBlank()) {
            r.problem("config.image: is required (e.g. registry.example/app:1.0 or busybox@sha256:...)");
        } else {
            try {
                ref = ImageReference.parse(image);
            } catch (IllegalArgumentException e) {
                r.problem("config.image: " + e.getMessage());
            }
        }
        PullPolicy policy = ref == null ? PullPolicy.IfNotPresent : ref.defaultPullPolicy();
        String pull = r.string("pullPolicy");
        if (pull != null) {
            try {
                policy = PullPolicy.valueOf(pull);
            } catch (IllegalArgumentException e) {
                r.problem("config.pullPolicy: " + UserText.quote(pull) + " is not Always, IfNotPresent or Never");
            }
        }
        String command = r.string("command");
        if (command != null && command.isEmpty()) {
            r.problem("config.command: must not be empty (leave it out to run the image's Entrypoint)");
        }
        String workingDir = r.string("workingDir");
        if (workingDir != null && !workingDir.startsWith("/")) {
            r.problem("config.workingDir: " + UserText.quote(workingDir) + " must be an absolute path");
        }
        List<String> capAdd = orEmpty(r.strings("capAdd"));
        List<String> capDrop = orEmpty(r.strings("capDrop"));
        for (String c : capAdd) {
            String p = Capabilities.problem(c);
            if (p != null) {
                r.problem("config.capAdd: " + p);
            }
        }
        for (String c : capDrop) {
            String p = Capabilities.problem(c);
            if (p != null) {
                r.problem("config.capDrop: " + p);
            }
        }
        String seccomp = r.string("seccompProfile");
        boolean confined = true;
        if (seccomp != null) {
            switch (seccomp) {
                case "RuntimeDefault" -> confined = true;
                case "Unconfined" -> {
                    confined = false;
                    if (!allowed.unconfined()) {
                        r.problem("config.seccompProfile: Unconfined is not allowed on this node (the agent's"
                                + " ociAllowUnconfined is off)");
                    }
                }
                default ->
                    r.problem("config.seccompProfile: " + UserText.quote(seccomp)
                            + " is not RuntimeDefault or Unconfined");
            }
        }
        boolean privileged = Boolean.TRUE.equals(r.bool("privileged"));
        if (privileged && !allowed.privileged()) {
            r.problem("config.privileged: privileged containers are not allowed on this node (the agent's"
                    + " ociAllowPrivileged is off)");
        }
        Integer shm = r.integer("shmSizeMB");
        if (shm != null && (shm < 1 || shm > MAX_SHM_MB)) {
            r.problem("config.shmSizeMB: " + shm + " is not between 1 and " + MAX_SHM_MB);
        }
        List<String> mountProblems = new java.util.ArrayList<>();
        VolumeMounts.read(r.raw(VolumeMounts.KEY), VolumeMounts.Where.ANYWHERE, mountProblems);
        mountProblems.forEach(r::problem);
        List<String> args = r.strings("args");
        boolean readOnlyRoot = Boolean.TRUE.equals(r.bool("readOnlyRootFilesystem"));
        problems.addAll(r.problems());
        return new OciConfig(
                ref,
                policy,
                command,
                args,
                workingDir,
                readOnlyRoot,
                capAdd,
                capDrop,
                confined,
                privileged,
                shm == null ? DEFAULT_SHM_MB : shm);
    }

    /** The process the container runs: the image's, with {@code command} and {@code args} as Kubernetes applies them. */
    List<String> argv(List<String> entrypoint, List<String> cmd) {
        List<String> out = new java.util.ArrayList<>();
        if (command != null) {
            out.add(command);
            if (args != null) {
                out.addAll(args);
            }
        } else {
            out.addAll(entrypoint);
            out.addAll(args != null ? args : cmd);
        }
        return List.copyOf(out);
    }

    /** The capabilities the container holds. */
    List<String> capabilities() {
        return privileged ? Capabilities.ALL : Capabilities.of(capAdd, capDrop);
    }

    private static List<String> orEmpty(List<String> l) {
        return l == null ? List.of() : l;
    }
}
