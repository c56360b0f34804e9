package dev.drover.driver.exec;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Whether this agent can run exec tasks, found once at start: it needs {@code unshare} and {@code setpriv}
 * (util-linux), task cgroups, and the right to create PID, mount, IPC and UTS namespaces and switch users (root, or
 * CAP_SYS_ADMIN, CAP_SETUID and CAP_SETGID, and no seccomp or LSM profile that forbids {@code unshare}). The last is
 * tried, not guessed: a throwaway {@code unshare} of those namespaces runs {@code true}.
 */
final class ExecSupport {

    private static final List<String> TOOLS = List.of("unshare", "nsenter", "setpriv", "mount", "umount");
    private static final List<Path> BIN = List.of(Path.of("/usr/bin"), Path.of("/bin"), Path.of("/usr/sbin"));

    private ExecSupport() {}

    /** What is missing, or empty when exec tasks can run. */
    static Optional<String> missing(boolean cgroups) {
        List<String> missing = new ArrayList<>();
        for (String tool : TOOLS) {
            if (BIN.stream().noneMatch(dir -> Files.isExecutable(dir.resolve(tool)))) {
                missing.add("the " + tool + " command (util-linux) is not installed");
            }
        }
        if (!cgroups) {
            missing.add("task cgroups (no writable cgroup hierarchy below the configured cgroupParent)");
        }
        if (missing.isEmpty()) {
            probe().ifPresent(missing::add);
        }
        return missing.isEmpty() ? Optional.empty() : Optional.of(String.join("; ", missing));
    }

    private static Optional<String> probe() {
        List<String> argv = new ArrayList<>(Namespaces.UNSHARE);
        argv.addAll(List.of("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "true"));
        try {
            Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
            p.getOutputStream().close();
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return Optional.of("a trial unshare of PID, mount, IPC and UTS namespaces hung");
            }
            String out = new String(p.getInputStream().readNBytes(2000)).trim();
            return p.exitValue() == 0
                    ? Optional.empty()
                    : Optional.of("the agent cannot create PID, mount, IPC and UTS namespaces or switch users"
                            + " (needs root, or CAP_SYS_ADMIN, CAP_SETUID and CAP_SETGID): " + out);
        } catch (IOException e) {
            return Optional.of("cannot run unshare: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.of("interrupted while trying unshare");
        }
    }
}
