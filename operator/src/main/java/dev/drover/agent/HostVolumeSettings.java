package dev.drover.agent;

import com.fasterxml.jackson.databind.JsonNode;
import dev.drover.api.v1alpha1.Names;
import dev.drover.common.UserText;
import dev.drover.volumes.HostVolume;
import dev.drover.volumes.HostVolumes;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * {@code hostVolumes: {NAME: {path, readOnly, namespaces}}} of the agent's config file: the node's directories that
 * allocations may mount by name. None by default. A volume is lent only to the namespaces it lists ({@code "*"} for
 * every one); one that lists none is lent to no allocation, so a directory of the node is never open to every
 * namespace by omission. Each path is checked at start ({@link HostVolumes#pathProblem}).
 */
final class HostVolumeSettings {

    private static final String KEY = "hostVolumes";

    private HostVolumeSettings() {}

    static HostVolumes load(AgentSettings s, Path dataDir) throws ConfigException {
        JsonNode node = s.fileValue(KEY);
        if (node == null || node.isNull()) {
            return HostVolumes.NONE;
        }
        if (!node.isObject()) {
            throw new ConfigException(KEY + " must map a volume name to {path, readOnly, namespaces}");
        }
        if (node.size() > HostVolumes.MAX) {
            throw new ConfigException(
                    KEY + " names " + node.size() + " volumes; at most " + HostVolumes.MAX + " are allowed");
        }
        List<HostVolume> out = new ArrayList<>();
        for (var e : node.properties()) {
            String name = e.getKey();
            String at = KEY + "." + UserText.bare(name);
            if (!Names.isLabel(name)) {
                throw new ConfigException(at + ": " + UserText.quote(name)
                        + " is not a volume name (a DNS-1123 label: lower-case letters, digits and '-', at most 63)");
            }
            JsonNode v = e.getValue();
            if (!v.isObject()) {
                throw new ConfigException(at + " must be {path, readOnly, namespaces}");
            }
            for (var field : v.properties()) {
                if (!List.of("path", "readOnly", "namespaces").contains(field.getKey())) {
                    throw new ConfigException(at + "." + UserText.bare(field.getKey())
                            + ": unknown key (known: path, readOnly, namespaces)");
                }
            }
            JsonNode path = v.get("path");
            if (path == null || !path.isTextual()) {
                throw new ConfigException(at + ".path is required: the absolute path of a directory of the node");
            }
            String problem = HostVolumes.pathProblem(path.asText(), dataDir);
            if (problem != null) {
                throw new ConfigException(at + ".path: " + problem);
            }
            JsonNode ro = v.get("readOnly");
            if (ro != null && !ro.isBoolean() && !ro.isNull()) {
                throw new ConfigException(at + ".readOnly: " + UserText.quote(ro.asText()) + " is not true or false");
            }
            out.add(new HostVolume(
                    name, Path.of(path.asText()), ro != null && ro.asBoolean(), namespaces(at, v.get("namespaces"))));
        }
        return new HostVolumes(out);
    }

    private static Set<String> namespaces(String at, JsonNode node) throws ConfigException {
        Set<String> out = new LinkedHashSet<>();
        if (node == null || node.isNull()) {
            return out;
        }
        if (!node.isArray()) {
            throw new ConfigException(at + ".namespaces must be a list of namespaces, or [\"*\"] for every one");
        }
        for (JsonNode n : node) {
            String ns = n.asText();
            if (!n.isTextual() || !ns.equals(HostVolume.ALL) && !Names.isLabel(ns)) {
                throw new ConfigException(at + ".namespaces: " + UserText.quote(ns)
                        + " is not a namespace name (or \"*\" for every namespace)");
            }
            out.add(ns);
        }
        return out;
    }
}
