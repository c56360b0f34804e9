package dev.drover.local;

import java.util.Arrays;

/**
 * A request path split the way the API server routes it:
 * {@code /api/v1/namespaces/NS/PLURAL/NAME/SUB} or {@code /apis/GROUP/VERSION/...}.
 * The core group is the empty string.
 */
record ResourcePath(String group, String version, String namespace, String plural, String name, String subresource) {

    /** The parsed path, or null when it names no resource (discovery, openapi, version...). */
    static ResourcePath parse(String path) {
        String[] s = Arrays.stream(path.split("/")).filter(p -> !p.isEmpty()).toArray(String[]::new);
        int i;
        String group;
        String version;
        if (s.length >= 3 && s[0].equals("api")) {
            group = "";
            version = s[1];
            i = 2;
        } else if (s.length >= 4 && s[0].equals("apis")) {
            group = s[1];
            version = s[2];
            i = 3;
        } else {
            return null;
        }
        String namespace = null;
        if (s.length - i >= 3 && s[i].equals("namespaces")) {
            namespace = s[i + 1];
            i += 2;
        }
        String plural = s[i];
        String name = s.length > i + 1 ? s[i + 1] : null;
        String sub = s.length > i + 2 ? s[i + 2] : null;
        return new ResourcePath(group, version, namespace, plural, name, sub);
    }

    String groupVersion() {
        return group.isEmpty() ? version : group + "/" + version;
    }

    /** The path of the collection this resource lives in (namespace kept). */
    String collectionPath() {
        String base = group.isEmpty() ? "/api/" + version : "/apis/" + group + "/" + version;
        return base + (namespace == null ? "" : "/namespaces/" + namespace) + "/" + plural;
    }
}
