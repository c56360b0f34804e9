package dev.drover.local;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Acting as someone else, as kube-apiserver's impersonation filter allows it ({@code kubectl --as}, {@code --as-group},
 * {@code --as-uid}): the {@code Impersonate-User}, {@code Impersonate-Group}, {@code Impersonate-Uid} and
 * {@code Impersonate-Extra-KEY} headers make the request the impersonated user's, once the requester is allowed the
 * {@code impersonate} verb on each thing asked for, in the order the real server asks: the user ({@code users}, or
 * {@code serviceaccounts} NAME in NS for {@code system:serviceaccount:NS:NAME}, core group), each group
 * ({@code groups}), each extra value ({@code userextras/KEY}) and the uid ({@code uids}), the last two in
 * {@code authentication.k8s.io}. The first one denied is the request's 403, naming what could not be impersonated.
 */
final class Impersonation {

    static final String USER = "Impersonate-User";
    static final String GROUP = "Impersonate-Group";
    static final String UID = "Impersonate-Uid";
    static final String EXTRA = "Impersonate-Extra-";

    private static final String SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:";
    private static final String AUTHENTICATION_GROUP = "authentication.k8s.io";
    private static final String AUTHENTICATED = "system:authenticated";
    private static final String UNAUTHENTICATED = "system:unauthenticated";

    private final Authorizer authorizer;

    Impersonation(Authorizer authorizer) {
        this.authorizer = authorizer;
    }

    /**
     * Who the request acts as: {@code requester} when it asks to impersonate nobody, else the impersonated user.
     *
     * @param headers every request header by name (any case), the values one a header line
     * @throws ApiFront.ApiError 400 for groups, extras or a uid without a user; 403 for what the requester may not
     *     impersonate
     */
    UserInfo actingAs(UserInfo requester, Map<String, List<String>> headers) {
        String user = "";
        List<String> groups = new ArrayList<>();
        boolean groupsAsked = false;
        String uid = "";
        Map<String, List<String>> extra = new LinkedHashMap<>();
        List<String> extraHeaders = new ArrayList<>();
        for (Map.Entry<String, List<String>> h : headers.entrySet()) {
            String name = h.getKey().toLowerCase(Locale.ROOT);
            if (name.equals(USER.toLowerCase(Locale.ROOT))
                    && user.isEmpty()
                    && !h.getValue().isEmpty()) {
                user = h.getValue().getFirst();
            } else if (name.equals(GROUP.toLowerCase(Locale.ROOT))) {
                groups.addAll(h.getValue());
                groupsAsked = !groups.isEmpty();
            } else if (name.equals(UID.toLowerCase(Locale.ROOT))
                    && uid.isEmpty()
                    && !h.getValue().isEmpty()) {
                uid = h.getValue().getFirst();
            } else if (name.startsWith(EXTRA.toLowerCase(Locale.ROOT))) {
                String key = extraKey(name.substring(EXTRA.length()));
                extra.computeIfAbsent(key, k -> new ArrayList<>()).addAll(h.getValue());
                extraHeaders.add(key);
            }
        }
        if (user.isEmpty()) {
            if (groupsAsked || !extra.isEmpty() || !uid.isEmpty()) {
                throw new ApiFront.ApiError(
                        400,
                        "BadRequest",
                        "requested "
                                + (groupsAsked ? "groups " + groups + " " : "")
                                + (extra.isEmpty() ? "" : "extra " + extraHeaders + " ")
                                + (uid.isEmpty() ? "" : "uid \"" + uid + "\" ")
                                + "without impersonating a user");
            }
            return requester;
        }
        String[] serviceAccount = serviceAccount(user);
        if (serviceAccount != null) {
            allow(requester, "", "serviceaccounts", null, serviceAccount[0], serviceAccount[1]);
        } else {
            allow(requester, "", "users", null, null, user);
        }
        for (String group : groups) {
            allow(requester, "", "groups", null, null, group);
        }
        for (Map.Entry<String, List<String>> e : extra.entrySet()) {
            for (String value : e.getValue()) {
                allow(requester, AUTHENTICATION_GROUP, "userextras", e.getKey(), null, value);
            }
        }
        if (!uid.isEmpty()) {
            allow(requester, AUTHENTICATION_GROUP, "uids", null, null, uid);
        }
        List<String> acting = new ArrayList<>();
        if (serviceAccount != null && !groupsAsked) {
            acting.add("system:serviceaccounts");
            acting.add("system:serviceaccounts:" + serviceAccount[0]);
        }
        acting.addAll(groups);
        if (!user.equals(UserInfo.ANONYMOUS.username())) {
            if (!acting.contains(AUTHENTICATED) && !acting.contains(UNAUTHENTICATED)) {
                acting.add(AUTHENTICATED);
            }
        } else if (!acting.contains(UNAUTHENTICATED)) {
            acting.add(UNAUTHENTICATED);
        }
        return new UserInfo(user, uid, acting, extra);
    }

    private void allow(UserInfo requester, String group, String resource, String sub, String namespace, String name) {
        RequestInfo asked =
                new RequestInfo("impersonate", "", new ResourcePath(group, "v1", namespace, resource, name, sub), name);
        Authorizer.Decision decision = authorizer.authorize(requester, asked);
        if (!decision.allowed()) {
            throw Forbidden.of(requester, asked, decision.reason());
        }
    }

    /** {@code [namespace, name]} for a service account's user name whose parts a real server takes; else null. */
    private static String[] serviceAccount(String user) {
        if (!user.startsWith(SERVICE_ACCOUNT_PREFIX)) {
            return null;
        }
        String[] parts = user.substring(SERVICE_ACCOUNT_PREFIX.length()).split(":", -1);
        if (parts.length != 2
                || !ObjectNames.problems(Catalog.NAMESPACES, parts[0]).isEmpty()
                || !ObjectNames.problems(Catalog.SERVICE_ACCOUNTS, parts[1]).isEmpty()) {
            return null;
        }
        return parts;
    }

    /** The key of an {@code Impersonate-Extra-} header: lower-cased, then %-decoded where it decodes. */
    private static String extraKey(String encoded) {
        if (!encoded.contains("%")) {
            return encoded;
        }
        try {
            return URLDecoder.decode(encoded.replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException malformed) {
            return encoded; // as the real server: a key that does not decode is kept as sent
        }
    }
}
