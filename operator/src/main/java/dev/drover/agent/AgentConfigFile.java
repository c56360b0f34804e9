package dev.drover.agent;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/** The agent's YAML configuration file ({@code --config}): read, and checked against the keys it may hold. */
final class AgentConfigFile {

    private AgentConfigFile() {}

    /** Groups of keys in the YAML file ({@code gc: {interval: ...}}). */
    private static final Set<String> FILE_GROUPS =
            Set.of("gc", "statusWrites", "events", "api", "allocatable", "reserved", "imageGC", "bridge");

    /** The keys the YAML file may hold; anything else is an error rather than silently ignored. */
    static final Set<String> FILE_KEYS = Set.of(
            "kubeconfig",
            "nodeName",
            "dataDir",
            "enableRawExec",
            "enableExec",
            "enableOci",
            "ociRuntime",
            "ociAllowPrivileged",
            "ociAllowUnconfined",
            "ociRootfs",
            "cdiSpecDirs",
            "cdiAllowedHooks",
            "registryCAFile",
            "registryMirrors",
            "hostVolumes",
            "maxImageSizeMB",
            "imageGC.highThresholdPercent",
            "imageGC.lowThresholdPercent",
            "imageGC.minAge",
            "imageGC.maxAge",
            "rawExecLauncher",
            "cgroupParent",
            "pidsMax",
            "metricsPort",
            "apiPort",
            "peerTokenFile",
            "gatewayUser",
            "gatewayCaFile",
            "devicePlugins",
            "devicePluginConfig",
            "podResourcesSocket",
            "logLevel",
            "maxKillTimeout",
            "credentialPollInterval",
            "gc.interval",
            "gc.maxDiskUsage",
            "gc.maxInodeUsage",
            "gc.maxAllocations",
            "gc.parallelDestroys",
            "statusWrites.batchDelay",
            "statusWrites.resync",
            "events.qps",
            "events.burst",
            "events.taskEvents",
            "fieldSelector",
            "concurrentStarts",
            "bindAddress",
            "api.maxFollowers",
            "api.maxFollowersPerCaller",
            "api.maxFollowersPerNamespace",
            "api.reviewsPerSecond",
            "api.reviewBurst",
            "api.reviewTimeout",
            "allocatable.cpuMillis",
            "allocatable.memoryMB",
            "reserved.cpuMillis",
            "reserved.memoryMB",
            "cniBinDir",
            "dynamicPorts",
            "bridge.name",
            "bridge.subnet",
            "nodeAddress",
            "nodeSharing",
            "podName",
            "podNamespace");

    /** The environment variable naming the file when {@code --config} does not. */
    static final String ENV = "DROVER_CONFIG";

    /** The file {@code --config} names, else {@code $DROVER_CONFIG}, read; null when neither names one. */
    static JsonNode named(Optional<Path> flag, Map<String, String> env) throws ConfigException {
        Optional<Path> file = flag.or(() ->
                Optional.ofNullable(env.get(ENV)).filter(v -> !v.isBlank()).map(v -> Path.of(v.trim())));
        return file.isPresent() ? read(file.get()) : null;
    }

    /** The file's settings, refused whole if it holds a key Drover does not know. */
    static JsonNode read(Path file) throws ConfigException {
        JsonNode root;
        try {
            root = new ObjectMapper(new YAMLFactory()).readTree(Files.readAllBytes(file));
        } catch (IOException e) {
            throw new ConfigException("cannot read the configuration file " + file + ": " + e.getMessage());
        }
        if (root == null || root.isNull() || root.isMissingNode()) {
            return new ObjectMapper().createObjectNode();
        }
        if (!(root instanceof ObjectNode)) {
            throw new ConfigException(file + ": the configuration must be a YAML mapping");
        }
        List<String> unknown = new ArrayList<>();
        collectUnknown(root, "", unknown);
        if (!unknown.isEmpty()) {
            throw new ConfigException(
                    file + ": unknown setting(s) " + unknown + "; docs/configuration.md lists the known ones");
        }
        return root;
    }

    private static void collectUnknown(JsonNode node, String prefix, List<String> unknown) {
        for (Map.Entry<String, JsonNode> e : node.properties()) {
            String key = prefix + e.getKey();
            if (e.getValue().isObject() && FILE_GROUPS.contains(key)) {
                collectUnknown(e.getValue(), key + ".", unknown);
            } else if (!FILE_KEYS.contains(key)) {
                unknown.add(key);
            }
        }
    }
}
