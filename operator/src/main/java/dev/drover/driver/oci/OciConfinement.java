package dev.drover.driver.oci;

import dev.drover.driver.TaskConfig;
import dev.drover.driver.host.Confinement;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * How an oci task's runtime is run by its supervisor: in a mount namespace of its own ({@code unshare --mount}, no
 * fork: the runtime keeps the recorded PID), where the image's root filesystem is mounted with an overlay whose upper
 * directory is the task's, and the runtime then runs the container in the foreground, passing signals on to it. The
 * overlay lives only as long as that namespace: nothing is left mounted on the host when the container ends, nor
 * when the agent dies. Where the root filesystem is a copy of the image's ({@link RootfsMode#COPY}, made by the
 * driver before the start), the runtime runs as it is, with no namespace or shell before it. The container's
 * environment is in its spec, so the runtime runs with only {@code PATH}.
 */
final class OciConfinement implements Confinement {

    /**
     * Arguments: the image's root filesystem (the lower directory), the upper and work directories, the mount point,
     * then the runtime and its arguments. Exits 126, saying why on stderr, when the overlay cannot be mounted.
     */
    static final String MOUNT = """
            lower=$1; upper=$2; work=$3; root=$4; shift 4
            mount -t overlay overlay -o "lowerdir=$lower,upperdir=$upper,workdir=$work" "$root" ||
                { echo "drover: oci: cannot mount the image's root filesystem" >&2; exit 126; }
            exec "$@"
            """;

    static final List<String> UNSHARE = List.of("unshare", "--mount", "--propagation", "private", "--");

    private final RootfsMode rootfs;

    OciConfinement(RootfsMode rootfs) {
        this.rootfs = rootfs;
    }

    @Override
    public boolean appliesEnvironment(TaskConfig task) {
        return true;
    }

    /**
     * {@code args}: for an overlay, the lower, upper and work directories and the mount point, then the runtime's own
     * arguments; for a copy, the runtime's arguments alone.
     */
    @Override
    public List<String> argv(TaskConfig task, Path statusDir, Path command, List<String> args) {
        if (rootfs == RootfsMode.COPY) {
            List<String> argv = new ArrayList<>(List.of(command.toString()));
            argv.addAll(args);
            return argv;
        }
        List<String> argv = new ArrayList<>(UNSHARE);
        argv.addAll(List.of("/bin/sh", "-c", MOUNT, "oci"));
        argv.addAll(args.subList(0, 4));
        argv.add(command.toString());
        argv.addAll(args.subList(4, args.size()));
        return argv;
    }
}
