package dev.drover.volumes;

import dev.drover.api.v1alpha1.Volume;
import dev.drover.common.UserText;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The host volumes this agent lends ({@code hostVolumes} in its config), by name: whether an allocation may have the
 * volumes its spec names (node admission), and the directory a task's mount binds, checked again at each start.
 */
public final class HostVolumes {

    /** {@code Admitted=False} reason: a volume names a host volume this node's agent does not have. */
    public static final String UNKNOWN_HOST_VOLUME = "UnknownHostVolume";
    /** {@code Admitted=False} reason: a host volume does not let the allocation's namespace use it. */
    public static final String HOST_VOLUME_FORBIDDEN = "HostVolumeForbidden";
    /** The most host volumes an agent may lend. */
    public static final int MAX = 64;

    /** None: every allocation that names a volume is refused. */
    public static final HostVolumes NONE = new HostVolumes(List.of());

    private final Map<String, HostVolume> byName = new TreeMap<>();

    public HostVolumes(Collection<HostVolume> volumes) {
        for (HostVolume v : volumes) {
            if (byName.put(v.name(), v) != null) {
                throw new IllegalArgumentException("host volume " + UserText.quote(v.name()) + " is named twice");
            }
        }
    }

    public Optional<HostVolume> get(String name) {
        return Optional.ofNullable(byName.get(name));
    }

    /** Every host volume, by name. */
    public Collection<HostVolume> all() {
        return byName.values();
    }

    /** Why an allocation may not have its volumes here. */
    public record Refusal(String reason, String message) {}

    /**
     * Whether an allocation of {@code namespace} may have {@code volumes} here: each must name a host volume of this
     * agent that lets the namespace use it. The reason is the first volume's that fails; the message names each.
     */
    public Optional<Refusal> admit(String namespace, List<Volume> volumes) {
        if (volumes == null || volumes.isEmpty()) {
            return Optional.empty();
        }
        String reason = null;
        List<String> problems = new ArrayList<>();
        for (Volume v : volumes) {
            if (v == null) {
                continue;
            }
            HostVolume h = byName.get(v.getHostVolume());
            String problem;
            if (h == null) {
                problem = "volume " + UserText.quote(v.getName()) + " names host volume "
                        + UserText.quote(v.getHostVolume()) + ", which this node's agent does not have ("
                        + (byName.isEmpty()
                                ? "it has none"
                                : "it has " + UserText.join(List.copyOf(byName.keySet()), ", "))
                        + ")";
                reason = reason == null ? UNKNOWN_HOST_VOLUME : reason;
            } else if (!h.allows(namespace)) {
                problem = "volume " + UserText.quote(v.getName()) + ": host volume " + UserText.quote(h.name())
                        + " does not let namespace " + UserText.quote(namespace)
                        + " use it (its namespaces in the agent's hostVolumes)";
                reason = reason == null ? HOST_VOLUME_FORBIDDEN : reason;
            } else {
                continue;
            }
            problems.add(problem);
        }
        if (reason == null) {
            return Optional.empty();
        }
        return Optional.of(new Refusal(
                reason, "The node cannot give this allocation its volumes: " + String.join("; ", problems)));
    }

    /**
     * What is wrong with {@code path} as a host volume's, or null when nothing is: it must be absolute and clean (no
     * {@code .} or {@code ..}), an existing directory reached through no symbolic link, and neither the agent's data
     * dir, inside it, nor holding it (a task would see other allocations' files, or they its).
     */
    public static String pathProblem(String path, Path dataDir) {
        if (!path.startsWith("/")) {
            return UserText.quote(path) + " is not an absolute path";
        }
        for (String part : path.substring(1).split("/", -1)) {
            if (part.isEmpty() && !path.equals("/") || part.equals(".") || part.equals("..")) {
                return UserText.quote(path) + " is not a clean path (no '.', '..', '//' or trailing '/')";
            }
        }
        Path p = Path.of(path);
        Path data = dataDir.toAbsolutePath().normalize();
        if (p.startsWith(data) || data.startsWith(p)) {
            return UserText.quote(path) + " is, holds or is inside the agent's data dir " + data
                    + ", whose other allocations no task may see";
        }
        if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
            return UserText.quote(path) + " does not exist: create the directory first";
        }
        if (Files.isSymbolicLink(p)) {
            return UserText.quote(path) + " is a symbolic link: name the directory itself";
        }
        if (!Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
            return UserText.quote(path) + " is not a directory";
        }
        try {
            Path real = p.toRealPath();
            if (!real.equals(p)) {
                return UserText.quote(path) + " is reached through a symbolic link: name "
                        + UserText.quote(real.toString()) + " instead";
            }
            if (real.startsWith(data.toRealPath()) || data.toRealPath().startsWith(real)) {
                return UserText.quote(path) + " is, holds or is inside the agent's data dir " + data
                        + ", whose other allocations no task may see";
            }
        } catch (IOException e) {
            // the data dir is made later: compared as written above
        }
        return null;
    }

    /**
     * The directory {@code volume} lends, checked as it is now: still a directory, reached through no symbolic link
     * (one put on its path since the agent started is not followed).
     *
     * @throws IOException saying what changed
     */
    public static Path resolve(HostVolume volume) throws IOException {
        Path p = volume.path();
        if (!Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
            throw new IOException("host volume " + UserText.quote(volume.name()) + ": " + p
                    + " is no longer a directory (or is now a symbolic link)");
        }
        Path real = p.toRealPath();
        if (!real.equals(p)) {
            throw new IOException("host volume " + UserText.quote(volume.name()) + ": " + p
                    + " is now reached through a symbolic link (to " + real + "), which is not followed");
        }
        return p;
    }
}
