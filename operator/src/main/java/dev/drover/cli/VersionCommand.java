package dev.drover.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.drover.agentapi.AgentProtocol;
import dev.drover.metrics.BuildInfo;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code kubectl drover version}: the plugin's build (what its jar carries, as {@code drover_build_info} says of an
 * agent) and the agents' versions, read from the annotations each agent keeps on its Node ({@link
 * AgentProtocol#VERSION_ANNOTATION}): one list of Nodes' metadata, so it needs only {@code list} on nodes, and no
 * agent is asked anything.
 */
final class VersionCommand {

    /** The most Nodes read: one page; a larger cluster's first page is counted and the figure says so. */
    static final int MAX_NODES = 1000;
    /** Node names shown per version. */
    static final int NAMES_SHOWN = 3;

    static final String NODES_PATH = "/api/v1/nodes?limit=" + MAX_NODES;

    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

    private VersionCommand() {}

    /** {@code {version, revision, javaVersion}} of this plugin. */
    static ObjectNode client(BuildInfo build) {
        ObjectNode out = JSON.objectNode();
        out.put("version", build.version());
        out.put("revision", build.revision());
        out.put("javaVersion", build.javaVersion());
        return out;
    }

    /**
     * The agents' versions among {@code nodes} (a list's items, metadata only): one entry per version and revision,
     * most nodes first, with how many nodes run it and the first names; nodes of agents that publish no version (older
     * than this annotation) counted apart. Nodes without any Drover annotation run no agent and are not counted.
     */
    static ObjectNode agents(JsonNode nodes) {
        Map<List<String>, List<String>> byVersion = new LinkedHashMap<>();
        int unversioned = 0;
        int read = 0;
        for (JsonNode node : nodes) {
            read++;
            JsonNode annotations = node.path("metadata").path("annotations");
            String name = node.path("metadata").path("name").asText("?");
            String version = annotations.path(AgentProtocol.VERSION_ANNOTATION).asText(null);
            if (version != null) {
                String revision =
                        annotations.path(AgentProtocol.REVISION_ANNOTATION).asText("unknown");
                byVersion
                        .computeIfAbsent(List.of(version, revision), k -> new ArrayList<>())
                        .add(name);
            } else if (annotations.has(AgentProtocol.PORT_ANNOTATION)) {
                unversioned++;
            }
        }
        ObjectNode out = JSON.objectNode();
        ArrayNode versions = out.putArray("agents");
        byVersion.entrySet().stream()
                .sorted((a, b) -> b.getValue().size() - a.getValue().size())
                .forEach(e -> {
                    ObjectNode v = versions.addObject();
                    v.put("version", e.getKey().get(0));
                    v.put("revision", e.getKey().get(1));
                    v.put("nodes", e.getValue().size());
                    ArrayNode names = v.putArray("nodeNames");
                    e.getValue().stream().sorted().limit(NAMES_SHOWN).forEach(names::add);
                });
        out.put("nodesWithoutVersion", unversioned);
        out.put("nodesRead", read);
        out.put("allNodesRead", read < MAX_NODES);
        return out;
    }

    /** What {@code version} prints as text: the client's line, then (unless null) the agents'. */
    static String text(JsonNode client, JsonNode agents) {
        StringBuilder out = new StringBuilder("Client Version: ")
                .append(build(client))
                .append(", Java ")
                .append(TerminalText.clean(client.path("javaVersion").asText()))
                .append('\n');
        if (agents == null) {
            return out.toString();
        }
        JsonNode versions = agents.path("agents");
        int unversioned = agents.path("nodesWithoutVersion").asInt();
        if (versions.isEmpty() && unversioned == 0) {
            return out.append("Agent Versions: none found (no Node carries ")
                    .append(AgentProtocol.VERSION_ANNOTATION)
                    .append(": no Drover agent runs here)\n")
                    .toString();
        }
        out.append("Agent Versions:");
        if (!agents.path("allNodesRead").asBoolean(true)) {
            out.append(" (of the first ").append(MAX_NODES).append(" nodes)");
        }
        out.append('\n');
        for (JsonNode v : versions) {
            int n = v.path("nodes").asInt();
            List<String> names = new ArrayList<>();
            v.path("nodeNames").forEach(name -> names.add(TerminalText.clean(name.asText())));
            out.append("  ")
                    .append(build(v))
                    .append(": ")
                    .append(n)
                    .append(n == 1 ? " node (" : " nodes (")
                    .append(String.join(", ", names))
                    .append(n > names.size() ? ", ..." : "")
                    .append(")\n");
        }
        if (unversioned > 0) {
            out.append("  (older, publishes no version): ")
                    .append(unversioned)
                    .append(unversioned == 1 ? " node\n" : " nodes\n");
        }
        return out.toString();
    }

    /** {@code 0.1.0 (revision 1a2b3c4d5e6f)}: the revision shortened as git does, to twelve characters. */
    private static String build(JsonNode v) {
        String revision = TerminalText.clean(v.path("revision").asText("unknown"));
        return TerminalText.clean(v.path("version").asText("unknown")) + " (revision "
                + (revision.length() > 12 ? revision.substring(0, 12) : revision) + ")";
    }
}
