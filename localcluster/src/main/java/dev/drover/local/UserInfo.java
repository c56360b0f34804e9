package dev.drover.local;

import java.util.List;
import java.util.Map;

/**
 * Who made a request, as the authenticator found them: Kubernetes' {@code user.Info}.
 *
 * @param extra the authenticator's extra keys, e.g. {@code authentication.kubernetes.io/node-name} for a token bound
 *              to a node or to a pod on one
 */
record UserInfo(String username, String uid, List<String> groups, Map<String, List<String>> extra) {

    /** A request with no credentials, as a real server with anonymous auth on sees it. */
    static final UserInfo ANONYMOUS = new UserInfo("system:anonymous", "", List.of("system:unauthenticated"), Map.of());

    UserInfo {
        groups = List.copyOf(groups);
        extra = Map.copyOf(extra);
    }

    boolean inGroup(String group) {
        return groups.contains(group);
    }
}
