package dev.drover.local;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Map;

/** The discovery documents kubectl reads before anything else: {@code /api}, {@code /apis}, and per group-version. */
final class Discovery {

    private static final ObjectMapper JSON = NestingDepth.mapper();
    private static final List<String> VERBS =
            List.of("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch");

    private final Catalog catalog;
    private final java.util.function.Supplier<List<String[]>> aggregated;
    private final boolean podResize;

    /**
     * @param aggregated the groups and versions aggregated APIs serve ({@link Aggregator})
     * @param podResize  whether {@code pods/resize} is served (1.33 and newer)
     */
    Discovery(Catalog catalog, java.util.function.Supplier<List<String[]>> aggregated, boolean podResize) {
        this.catalog = catalog;
        this.aggregated = aggregated;
        this.podResize = podResize;
    }

    /** The document for {@code path}, or null when it is not a discovery path. */
    ObjectNode document(String path) {
        String p = path.endsWith("/") && path.length() > 1 ? path.substring(0, path.length() - 1) : path;
        if (p.equals("/api")) {
            ObjectNode n = JSON.createObjectNode().put("kind", "APIVersions");
            n.putArray("versions").add("v1");
            n.putArray("serverAddressByClientCIDRs")
                    .addObject()
                    .put("clientCIDR", "0.0.0.0/0")
                    .put("serverAddress", "127.0.0.1");
            return n;
        }
        if (p.equals("/apis")) {
            ObjectNode n = JSON.createObjectNode().put("kind", "APIGroupList").put("apiVersion", "v1");
            ArrayNode groups = n.putArray("groups");
            for (Map.Entry<String, List<String>> g : catalog.groups().entrySet()) {
                if (g.getKey().isEmpty()) {
                    continue;
                }
                ObjectNode group = groups.addObject().put("name", g.getKey());
                ArrayNode versions = group.putArray("versions");
                for (String v : g.getValue()) {
                    versions.addObject()
                            .put("groupVersion", g.getKey() + "/" + v)
                            .put("version", v);
                }
                group.putObject("preferredVersion")
                        .put("groupVersion", g.getKey() + "/" + g.getValue().getFirst())
                        .put("version", g.getValue().getFirst());
            }
            for (String[] gv : aggregated.get()) {
                ObjectNode group = groups.addObject().put("name", gv[0]);
                group.putArray("versions")
                        .addObject()
                        .put("groupVersion", gv[0] + "/" + gv[1])
                        .put("version", gv[1]);
                group.putObject("preferredVersion")
                        .put("groupVersion", gv[0] + "/" + gv[1])
                        .put("version", gv[1]);
            }
            return n;
        }
        if (p.equals("/api/v1")) {
            return resourceList("", "v1");
        }
        String[] s = p.split("/");
        if (s.length == 4 && s[1].equals("apis")) {
            return catalog.groups().containsKey(s[2])
                            && catalog.groups().get(s[2]).contains(s[3])
                    ? resourceList(s[2], s[3])
                    : null;
        }
        if (s.length == 3 && s[1].equals("apis") && catalog.groups().containsKey(s[2])) {
            List<String> versions = catalog.groups().get(s[2]);
            ObjectNode group = JSON.createObjectNode()
                    .put("kind", "APIGroup")
                    .put("apiVersion", "v1")
                    .put("name", s[2]);
            ArrayNode vs = group.putArray("versions");
            versions.forEach(
                    v -> vs.addObject().put("groupVersion", s[2] + "/" + v).put("version", v));
            group.putObject("preferredVersion")
                    .put("groupVersion", s[2] + "/" + versions.getFirst())
                    .put("version", versions.getFirst());
            return group;
        }
        return null;
    }

    private ObjectNode resourceList(String group, String version) {
        ObjectNode n = JSON.createObjectNode()
                .put("kind", "APIResourceList")
                .put("apiVersion", "v1")
                .put("groupVersion", group.isEmpty() ? version : group + "/" + version);
        ArrayNode resources = n.putArray("resources");
        for (ResourceType t : catalog.types()) {
            if (!t.group().equals(group) || !t.version().equals(version)) {
                continue;
            }
            ObjectNode r = resources
                    .addObject()
                    .put("name", t.plural())
                    .put("singularName", t.singular())
                    .put("namespaced", t.namespaced())
                    .put("kind", t.kind());
            (Catalog.REVIEWS.contains(t) ? List.of("create") : VERBS).forEach(r.putArray("verbs")::add);
            if (!t.shortNames().isEmpty()) {
                t.shortNames().forEach(r.putArray("shortNames")::add);
            }
            if (!t.categories().isEmpty()) {
                t.categories().forEach(r.putArray("categories")::add);
            }
            if (t.equals(Catalog.SERVICE_ACCOUNTS)) {
                ObjectNode token = resources
                        .addObject()
                        .put("name", "serviceaccounts/token")
                        .put("singularName", "")
                        .put("namespaced", true)
                        .put("group", "authentication.k8s.io")
                        .put("version", "v1")
                        .put("kind", "TokenRequest");
                token.putArray("verbs").add("create");
            }
            if (t.statusSubresource()) {
                ObjectNode status = resources
                        .addObject()
                        .put("name", t.plural() + "/status")
                        .put("singularName", "")
                        .put("namespaced", t.namespaced())
                        .put("kind", t.kind());
                status.putArray("verbs").add("get").add("patch").add("update");
            }
            if (podResize && t.equals(Catalog.PODS)) {
                ObjectNode resize = resources
                        .addObject()
                        .put("name", "pods/" + PodResize.SUBRESOURCE)
                        .put("singularName", "")
                        .put("namespaced", true)
                        .put("kind", "Pod");
                resize.putArray("verbs").add("get").add("patch").add("update");
            }
        }
        return n;
    }
}
