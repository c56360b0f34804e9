package dev.drover.controller.services;

import dev.drover.common.UserText;
import java.util.regex.Pattern;

/**
 * The allocation whose endpoints are published: an EndpointSlice's endpoint names it in its {@code targetRef}.
 *
 * @param namespace its namespace, which is its Services' namespace
 * @param name its name
 * @param uid its {@code metadata.uid}, empty when not known (the {@code targetRef} then has none)
 */
public record AllocationRef(String namespace, String name, String uid) {

    private static final Pattern DNS_1123_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");
    private static final Pattern DNS_1123_SUBDOMAIN =
            Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
    private static final Pattern UID = Pattern.compile("[-0-9a-zA-Z]{0,64}");

    public AllocationRef {
        if (namespace == null || !DNS_1123_LABEL.matcher(namespace).matches()) {
            throw new IllegalArgumentException("namespace " + UserText.quote(namespace) + " is not a namespace name");
        }
        if (name == null
                || name.length() > 253
                || !DNS_1123_SUBDOMAIN.matcher(name).matches()) {
            throw new IllegalArgumentException("allocation " + UserText.quote(name) + " is not an object name");
        }
        if (uid == null || !UID.matcher(uid).matches()) {
            throw new IllegalArgumentException("uid " + UserText.quote(uid) + " of allocation " + name
                    + " is not a uid: letters, digits and '-', at most 64");
        }
    }

    @Override
    public String toString() {
        return namespace + "/" + name;
    }
}
