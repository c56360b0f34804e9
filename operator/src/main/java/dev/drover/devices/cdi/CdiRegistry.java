package dev.drover.devices.cdi;

import dev.drover.common.UserText;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Resolves CDI device names ({@code nvidia.com/gpu=GPU-...}) to the edits the host's CDI spec files give a container
 * for them. The spec directories ({@code cdiSpecDirs}, {@link #DEFAULT_DIRS}) are read afresh at each resolve, so a
 * spec generated after the agent started is used at the next start; a later directory's device replaces an earlier
 * one's of the same name, as CDI orders them, and two files of one directory naming the same device make it
 * ambiguous, which is refused. A file that is refused ({@link CdiSpecParser}) costs only its own devices, and a name
 * they would have given is refused saying why.
 *
 * <p>Hooks: the runtime runs a spec's hooks on the host as root. None is run unless {@code cdiAllowedHooks} lists its
 * path; a device whose spec asks for another hook is refused naming it, so that a device is given whole or not at
 * all.
 */
public final class CdiRegistry {

    public static final List<Path> DEFAULT_DIRS = List.of(Path.of("/etc/cdi"), Path.of("/var/run/cdi"));
    /** Spec files read from one directory; past it the rest are refused. */
    static final int MAX_FILES = 256;
    /** Names resolved at once: a task's reserved devices. */
    static final int MAX_NAMES = 256;

    private final List<Path> dirs;
    private final Set<String> allowedHooks;

    /**
     * @param dirs         the spec directories, in rising priority
     * @param allowedHooks paths of the hooks a spec may have run
     */
    public CdiRegistry(List<Path> dirs, Set<String> allowedHooks) {
        this.dirs = List.copyOf(dirs);
        this.allowedHooks = Set.copyOf(allowedHooks);
    }

    public List<Path> dirs() {
        return dirs;
    }

    /**
     * The edits for {@code names}, in order: each spec's own edits once, before its first device's, then each device's;
     * every device node completed from its host file ({@link HostDevices#complete}).
     *
     * @throws CdiException naming the first name that is malformed, unknown, ambiguous or asks for a hook not allowed
     */
    public ContainerEdits resolve(List<String> names) throws CdiException {
        if (names.isEmpty()) {
            return ContainerEdits.NONE;
        }
        if (names.size() > MAX_NAMES) {
            throw new CdiException(names.size() + " CDI devices asked for, more than the " + MAX_NAMES + " allowed");
        }
        for (String n : names) {
            if (!CdiNames.isQualified(n)) {
                throw new CdiException(UserText.quote(n) + " is not a CDI device name (vendor/class=name)");
            }
        }
        Specs specs = load();
        ContainerEdits out = ContainerEdits.NONE;
        Map<CdiSpec, Boolean> applied = new IdentityHashMap<>();
        for (String n : new java.util.LinkedHashSet<>(names)) {
            if (specs.ambiguous().containsKey(n)) {
                throw new CdiException("CDI device " + UserText.quote(n) + " is ambiguous: "
                        + String.join(" and ", specs.ambiguous().get(n)) + " both describe it; remove one");
            }
            CdiSpec spec = specs.byName().get(n);
            if (spec == null) {
                throw new CdiException(unknown(n, specs.refused()));
            }
            ContainerEdits edits = spec.devices().get(n.substring(n.indexOf('=') + 1));
            if (applied.put(spec, true) == null) {
                edits = spec.edits().plus(edits);
            }
            for (CdiHook h : edits.hooks()) {
                if (!allowedHooks.contains(h.path())) {
                    throw new CdiException("CDI device " + UserText.quote(n) + " (spec " + spec.source()
                            + ") asks the runtime to run the hook " + h.path() + " (" + h.hookName()
                            + ") as root, which the agent's cdiAllowedHooks does not list: add it there if that"
                            + " program is trusted");
                }
            }
            out = out.plus(edits);
        }
        List<CdiDeviceNode> nodes = new ArrayList<>();
        for (CdiDeviceNode d : out.deviceNodes()) {
            nodes.add(HostDevices.complete(d));
        }
        return new ContainerEdits(out.env(), nodes, out.mounts(), out.hooks());
    }

    private String unknown(String name, List<String> refused) {
        StringBuilder why = new StringBuilder("unknown CDI device ")
                .append(UserText.quote(name))
                .append(": no spec file in ")
                .append(
                        dirs.isEmpty()
                                ? "(no cdiSpecDirs)"
                                : UserText.join(
                                        dirs.stream().map(Path::toString).toList(), ", "))
                .append(" describes it");
        if (name.startsWith("nvidia.com/")) {
            why.append(" (generate the NVIDIA spec with nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml)");
        }
        if (!refused.isEmpty()) {
            why.append("; spec files refused: ").append(UserText.join(refused, "; "));
        }
        return UserText.cut(why.toString(), 2000);
    }

    /** Every spec's devices by qualified name, the names two files of a directory both give, and what was refused. */
    record Specs(Map<String, CdiSpec> byName, Map<String, List<String>> ambiguous, List<String> refused) {}

    Specs load() {
        Map<String, CdiSpec> byName = new LinkedHashMap<>();
        Map<String, List<String>> ambiguous = new LinkedHashMap<>();
        List<String> refused = new ArrayList<>();
        for (Path dir : dirs) {
            Map<String, CdiSpec> inDir = new LinkedHashMap<>();
            Map<String, List<String>> twice = new LinkedHashMap<>();
            for (Path file : files(dir, refused)) {
                CdiSpec spec;
                try {
                    spec = CdiSpecParser.parse(file);
                } catch (CdiException e) {
                    refused.add(e.getMessage());
                    continue;
                }
                for (String device : spec.devices().keySet()) {
                    String name = spec.kind() + "=" + device;
                    CdiSpec other = inDir.putIfAbsent(name, spec);
                    if (other != null) {
                        twice.computeIfAbsent(name, k -> new ArrayList<>(List.of(other.source())))
                                .add(spec.source());
                    }
                }
            }
            // a later directory's device replaces an earlier one's, whether one or ambiguous
            for (var e : inDir.entrySet()) {
                if (twice.containsKey(e.getKey())) {
                    byName.remove(e.getKey());
                    ambiguous.put(e.getKey(), twice.get(e.getKey()));
                } else {
                    byName.put(e.getKey(), e.getValue());
                    ambiguous.remove(e.getKey());
                }
            }
        }
        return new Specs(byName, ambiguous, refused);
    }

    /** The spec files of {@code dir} in name order; a missing directory has none. */
    private static List<Path> files(Path dir, List<String> refused) {
        TreeSet<Path> files = new TreeSet<>();
        int seen = 0;
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir, CdiSpecParser::isSpecFile)) {
            for (Path p : entries) {
                if (++seen > MAX_FILES) {
                    refused.add(dir + " holds more than " + MAX_FILES + " spec files; the rest are not read");
                    break;
                }
                files.add(p);
            }
        } catch (NoSuchFileException e) {
            return List.of();
        } catch (IOException e) {
            refused.add(dir + " cannot be listed: " + e.getMessage());
        }
        return List.copyOf(files);
    }
}
