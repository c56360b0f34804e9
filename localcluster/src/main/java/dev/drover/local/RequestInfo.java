package dev.drover.local;

import java.util.Locale;

/**
 * What a request asks to do, in the authorizer's terms (Kubernetes' {@code RequestInfo}): a verb on a resource, or
 * on a non-resource path.
 *
 * <p>Resource verbs follow the method: GET is {@code get} for one object and {@code list} for a collection (or
 * {@code watch} with {@code ?watch=true}), POST {@code create}, PUT {@code update}, PATCH {@code patch}, DELETE
 * {@code delete} for one object and {@code deletecollection} for a collection. A list or watch whose field selector
 * is exactly {@code metadata.name=N} names N, so {@code resourceNames} rules apply to it as on a real server.
 * Non-resource requests use the lower-case method ({@code get}, {@code post}, ...).
 *
 * @param resource the resource addressed, null for a non-resource path (discovery, /version, /healthz...)
 * @param name     the object's name: from the path, or from a {@code metadata.name} field selector; null if none
 */
record RequestInfo(String verb, String path, ResourcePath resource, String name) {

    boolean isResourceRequest() {
        return resource != null;
    }

    /** The namespace the request is in: the path's, or for a namespace itself its own name; null at cluster scope. */
    String namespace() {
        if (resource == null) {
            return null;
        }
        if (resource.namespace() == null
                && resource.group().isEmpty()
                && resource.plural().equals("namespaces")) {
            return resource.name();
        }
        return resource.namespace();
    }

    static RequestInfo of(String method, String path, Query query) {
        ResourcePath rp = ResourcePath.parse(path);
        if (rp == null) {
            return new RequestInfo(method.toLowerCase(Locale.ROOT), path, null, null);
        }
        String verb = switch (method) {
            case "GET", "HEAD" -> rp.name() != null ? "get" : query.isWatch() ? "watch" : "list";
            case "POST" -> "create";
            case "PUT" -> "update";
            case "PATCH" -> "patch";
            case "DELETE" -> rp.name() != null ? "delete" : "deletecollection";
            default -> method.toLowerCase(Locale.ROOT);
        };
        String name = rp.name();
        if (name == null && (verb.equals("list") || verb.equals("watch"))) {
            name = exactName(query.get("fieldSelector"));
        }
        if (rp.name() != null && query.isWatch()) {
            verb = "watch";
        }
        return new RequestInfo(verb, path, rp, name);
    }

    /** N when the field selector is exactly {@code metadata.name=N} (or {@code ==N}), else null. */
    private static String exactName(String selector) {
        if (selector == null || selector.contains(",")) {
            return null;
        }
        for (String op : new String[] {"==", "="}) {
            String prefix = "metadata.name" + op;
            if (selector.startsWith(prefix)
                    && !selector.substring(prefix.length()).contains("=")) {
                String name = selector.substring(prefix.length());
                return name.isEmpty() || name.contains("/") || name.equals(".") || name.equals("..") ? null : name;
            }
        }
        return null;
    }
}
