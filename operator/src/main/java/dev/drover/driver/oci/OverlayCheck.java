package dev.drover.driver.oci;

import dev.drover.common.UserText;
import dev.drover.fs.TreeRemover;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Whether this node can mount containers' overlays ({@link RootfsMode#OVERLAY}), else they get copies
 * ({@link RootfsMode#COPY}): found once, at the agent's start, where {@code ociRootfs} is {@code auto}.
 */
public final class OverlayCheck {

    /** The mode the agent found, and why it is a copy (for its warning) when it is. */
    public record Detected(RootfsMode mode, Optional<String> why) {}

    private OverlayCheck() {}

    /**
     * Finds whether this node can mount containers' overlays: by trying one, once, in {@code scratch} (a directory to
     * make and remove, on the data dir's disk). A list of the kernel's filesystems alone would not do: the module may
     * be loadable (a mount loads it), and a kernel that has overlayfs still refuses an upper directory on some
     * filesystems (overlayfs itself, where the data dir is in a container's own root).
     */
    public static Detected detect(Path scratch) {
        String filesystems;
        try {
            filesystems = Files.readString(Path.of("/proc/filesystems"));
        } catch (IOException e) {
            filesystems = "";
        }
        return decide(filesystems, tryMount(scratch), scratch);
    }

    /**
     * What {@link #detect} concludes from the kernel's list of filesystems ({@code /proc/filesystems}) and the trial
     * mount's failure (empty when it mounted).
     */
    static Detected decide(String procFilesystems, Optional<String> trialFailure, Path scratch) {
        if (trialFailure.isEmpty()) {
            return new Detected(RootfsMode.OVERLAY, Optional.empty());
        }
        String failure = trialFailure.get();
        return new Detected(
                RootfsMode.COPY,
                Optional.of(
                        listed(procFilesystems)
                                ? "the kernel has overlayfs, but a trial overlay mount on the data dir's disk ("
                                        + scratch + ") failed, perhaps for its filesystem: " + failure
                                : "the kernel has no overlayfs (not in /proc/filesystems, and a trial mount, which"
                                        + " would have loaded its module, failed: " + failure + ")"));
    }

    /** Whether {@code /proc/filesystems}' content names {@code overlay}. */
    static boolean listed(String procFilesystems) {
        return procFilesystems
                .lines()
                .map(l -> l.substring(l.indexOf('\t') + 1).strip())
                .anyMatch("overlay"::equals);
    }

    /** Mounts an overlay of empty directories in {@code scratch}, in a mount namespace of its own; why it failed. */
    static Optional<String> tryMount(Path scratch) {
        try {
            if (Files.exists(scratch)) {
                TreeRemover.remove(scratch, 100, 8);
            }
            Files.createDirectories(scratch);
            List<String> argv = new ArrayList<>(OciConfinement.UNSHARE);
            argv.addAll(List.of("/bin/sh", "-c", OciConfinement.MOUNT, "oci"));
            for (String dir : List.of("lower", "upper", "work", "merged")) {
                argv.add(Files.createDirectory(scratch.resolve(dir)).toString());
            }
            argv.add("true");
            Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
            p.getOutputStream().close();
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return Optional.of("the trial mount hung");
            }
            String out = new String(p.getInputStream().readNBytes(2000)).strip();
            return p.exitValue() == 0 ? Optional.empty() : Optional.of(UserText.cut(out, 500));
        } catch (IOException e) {
            return Optional.of("cannot try: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.of("interrupted while trying");
        } finally {
            try {
                TreeRemover.remove(scratch, 100, 8);
            } catch (IOException e) {
                // in the data dir; the next start tries again there
            }
        }
    }
}
