package dev.drover.local;

/** The real API server's 403 for a request its authorizer denied: same message, reason and details. */
final class Forbidden {

    private Forbidden() {}

    /**
     * E.g. {@code allocations.drover.dev "web" is forbidden: User "system:serviceaccount:ns:sa" cannot get resource
     * "allocations" in API group "drover.dev" in the namespace "default"}, or for a path {@code forbidden: User
     * "system:anonymous" cannot get path "/metrics"}; a non-empty authorizer reason follows after ": ".
     */
    static ApiFront.ApiError of(UserInfo user, RequestInfo request, String reason) {
        String why = reason == null || reason.isEmpty() ? "" : ": " + reason;
        if (!request.isResourceRequest()) {
            return new ApiFront.ApiError(
                    403,
                    "Forbidden",
                    "forbidden: User \"" + user.username() + "\" cannot " + request.verb() + " path \"" + request.path()
                            + "\"" + why,
                    null,
                    "",
                    "");
        }
        ResourcePath rp = request.resource();
        String resource = rp.subresource() == null ? rp.plural() : rp.plural() + "/" + rp.subresource();
        String namespace = request.namespace();
        String detail = "User \"" + user.username() + "\" cannot " + request.verb() + " resource \"" + resource
                + "\" in API group \"" + rp.group() + "\""
                + (namespace == null || namespace.isEmpty()
                        ? " at the cluster scope"
                        : " in the namespace \"" + namespace + "\"");
        String qualified = rp.group().isEmpty() ? rp.plural() : rp.plural() + "." + rp.group();
        String name = request.name();
        String message = (name == null ? qualified + " is forbidden: " : qualified + " \"" + name + "\" is forbidden: ")
                + detail
                + why;
        return new ApiFront.ApiError(403, "Forbidden", message, name, rp.group(), rp.plural());
    }
}
