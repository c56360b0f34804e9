package dev.drover.agent;

import com.fasterxml.jackson.databind.JsonNode;
import dev.drover.common.UserText;
import dev.drover.devices.cdi.CdiRegistry;
import dev.drover.driver.oci.RootfsMode;
import dev.drover.image.ImageGc;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The agent's settings for container tasks (the {@code oci} driver) and the images they run: whether it is on
 * ({@code enableOci}), the OCI runtime ({@code ociRuntime}: runc or crun, found on the usual paths when not named),
 * what containers may ask for ({@code ociAllowPrivileged}, {@code ociAllowUnconfined}), the registries
 * ({@code registryCAFile}, {@code registryMirrors}: mirror hosts tried before each registry), the image store
 * ({@code maxImageSizeMB}, {@code imageGC} thresholds), and the CDI specs that give containers their devices
 * ({@code cdiSpecDirs}, {@code cdiAllowedHooks}: the only hooks a spec may have the runtime run), and how containers'
 * root filesystems are made ({@code ociRootfs}).
 *
 * @param runtime empty when none was named and none is installed: every oci task then fails validation saying so
 * @param rootfs  {@code ociRootfs}: an overlay or a copy of the image; empty ({@code auto}) to find at start which the
 *     node can do
 */
public record ContainerSettings(
        boolean enabled,
        Optional<Path> runtime,
        boolean allowPrivileged,
        boolean allowUnconfined,
        Optional<Path> registryCaFile,
        Map<String, List<String>> registryMirrors,
        long maxImageBytes,
        ImageGc.Thresholds imageGc,
        List<Path> cdiSpecDirs,
        Set<String> cdiAllowedHooks,
        Optional<RootfsMode> rootfs) {

    /** Where a runtime is looked for when {@code ociRuntime} is not set, in order. */
    static final List<Path> RUNTIMES = List.of(
            Path.of("/usr/sbin/runc"),
            Path.of("/usr/bin/runc"),
            Path.of("/usr/local/bin/runc"),
            Path.of("/usr/bin/crun"),
            Path.of("/usr/local/bin/crun"));

    static final long DEFAULT_MAX_IMAGE_MB = 20 * 1024;

    public ContainerSettings {
        registryMirrors = Map.copyOf(registryMirrors);
        cdiSpecDirs = List.copyOf(cdiSpecDirs);
        cdiAllowedHooks = Set.copyOf(cdiAllowedHooks);
    }

    /** The resolver of CDI device names over this node's spec directories. */
    public CdiRegistry cdi() {
        return new CdiRegistry(cdiSpecDirs, cdiAllowedHooks);
    }

    /** Off: no container tasks. */
    static final ContainerSettings OFF = new ContainerSettings(
            false,
            Optional.empty(),
            false,
            false,
            Optional.empty(),
            Map.of(),
            DEFAULT_MAX_IMAGE_MB << 20,
            ImageGc.Thresholds.DEFAULTS,
            CdiRegistry.DEFAULT_DIRS,
            Set.of(),
            Optional.empty());

    static ContainerSettings load(AgentSettings s) throws ConfigException {
        boolean enabled =
                s.bool("enableOci", "--enable-oci", "DROVER_ENABLE_OCI").orElse(false);
        Optional<Path> named =
                s.text("ociRuntime", "--oci-runtime", "DROVER_OCI_RUNTIME").map(Path::of);
        if (named.isPresent() && !named.get().isAbsolute()) {
            throw new ConfigException("ociRuntime: "
                    + UserText.quote(named.get().toString()) + " must be an absolute path (of runc or crun)");
        }
        Optional<Path> runtime = named.isPresent()
                ? named
                : RUNTIMES.stream().filter(Files::isExecutable).findFirst();
        Optional<Path> ca = s.text("registryCAFile", "--registry-ca-file", "DROVER_REGISTRY_CA_FILE")
                .map(Path::of);
        long maxMb = s.integer("maxImageSizeMB", null, null).map(Long::valueOf).orElse(DEFAULT_MAX_IMAGE_MB);
        if (maxMb < 1) {
            throw new ConfigException("maxImageSizeMB must be 1 or more, not " + maxMb);
        }
        ImageGc.Thresholds gc;
        try {
            gc = new ImageGc.Thresholds(
                    s.integer("imageGC.highThresholdPercent", null, null).orElse(85),
                    s.integer("imageGC.lowThresholdPercent", null, null).orElse(80),
                    s.durationOrZero("imageGC.minAge").orElse(Duration.ofMinutes(2)),
                    s.durationOrZero("imageGC.maxAge").orElse(Duration.ZERO));
        } catch (IllegalArgumentException e) {
            throw new ConfigException(e.getMessage());
        }
        return new ContainerSettings(
                enabled,
                runtime,
                s.bool("ociAllowPrivileged", null, "DROVER_OCI_ALLOW_PRIVILEGED")
                        .orElse(false),
                s.bool("ociAllowUnconfined", null, "DROVER_OCI_ALLOW_UNCONFINED")
                        .orElse(false),
                ca,
                mirrors(s.fileValue("registryMirrors")),
                maxMb << 20,
                gc,
                cdiSpecDirs(s),
                Set.copyOf(absolutePaths("cdiAllowedHooks", s.fileValue("cdiAllowedHooks"), null).stream()
                        .map(Path::toString)
                        .toList()),
                rootfs(s));
    }

    /** {@code ociRootfs}: {@code auto} (the default), {@code overlay} or {@code copy}. */
    private static Optional<RootfsMode> rootfs(AgentSettings s) throws ConfigException {
        String named = s.text("ociRootfs", null, "DROVER_OCI_ROOTFS").orElse("auto");
        Optional<RootfsMode> mode = RootfsMode.parse(named);
        if (mode.isEmpty() && !named.equals("auto")) {
            throw new ConfigException("ociRootfs: " + UserText.quote(named) + " is not auto, overlay or copy");
        }
        return mode;
    }

    /** {@code cdiSpecDirs} (or {@code DROVER_CDI_SPEC_DIRS}, colon-separated); {@code /etc/cdi}, {@code /var/run/cdi}. */
    private static List<Path> cdiSpecDirs(AgentSettings s) throws ConfigException {
        String env = s.env().get("DROVER_CDI_SPEC_DIRS");
        JsonNode file = s.fileValue("cdiSpecDirs");
        boolean set = (env != null && !env.isBlank()) || (file != null && !file.isNull());
        return set ? absolutePaths("cdiSpecDirs", file, env) : CdiRegistry.DEFAULT_DIRS;
    }

    /**
     * Absolute paths: from the environment as a colon-separated list when {@code fromEnv} is set, else from the file's
     * list.
     */
    private static List<Path> absolutePaths(String key, JsonNode node, String fromEnv) throws ConfigException {
        List<String> raw = new ArrayList<>();
        if (fromEnv != null && !fromEnv.isBlank()) {
            raw.addAll(List.of(fromEnv.split(":")));
        } else if (node != null && !node.isNull()) {
            if (!node.isArray()) {
                throw new ConfigException(key + " must be a list of absolute paths");
            }
            node.forEach(n -> raw.add(n.asText()));
        }
        if (raw.size() > 64) {
            throw new ConfigException(key + " lists " + raw.size() + " paths, more than the 64 allowed");
        }
        List<Path> out = new ArrayList<>();
        for (String p : raw) {
            if (!p.startsWith("/")
                    || p.indexOf('\0') >= 0
                    || !Path.of(p).normalize().toString().equals(p)) {
                throw new ConfigException(key + ": " + UserText.quote(p) + " is not an absolute, clean path");
            }
            out.add(Path.of(p));
        }
        return out;
    }

    /** {@code registryMirrors: {docker.io: [mirror.local:5000]}}: hosts (and ports) tried, in order, before each. */
    private static Map<String, List<String>> mirrors(JsonNode node) throws ConfigException {
        if (node == null || node.isNull()) {
            return Map.of();
        }
        if (!node.isObject()) {
            throw new ConfigException("registryMirrors must map a registry to a list of mirror hosts");
        }
        Map<String, List<String>> out = new LinkedHashMap<>();
        for (var e : node.properties()) {
            if (!e.getValue().isArray()) {
                throw new ConfigException("registryMirrors." + e.getKey() + " must be a list of mirror hosts");
            }
            List<String> hosts = new ArrayList<>();
            for (JsonNode h : e.getValue()) {
                String host = h.asText();
                if (host.isBlank() || host.contains("/") || host.contains("@")) {
                    throw new ConfigException("registryMirrors." + e.getKey() + ": " + UserText.quote(host)
                            + " is not a host[:port] (HTTPS is always used)");
                }
                hosts.add(host);
            }
            out.put(e.getKey(), List.copyOf(hosts));
        }
        return out;
    }
}
