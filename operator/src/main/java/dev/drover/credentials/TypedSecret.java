package dev.drover.credentials;

import java.util.Map;

/**
 * A Secret as read for a use that depends on its type ({@code kubernetes.io/dockerconfigjson} for image pulls).
 *
 * @param type its {@code type}; {@code Opaque} when the API server gave none
 * @param data its data, decoded
 */
public record TypedSecret(String type, Map<String, byte[]> data) {

    /** The type the API server gives a Secret created without one. */
    public static final String OPAQUE = "Opaque";

    public TypedSecret {
        type = type == null || type.isEmpty() ? OPAQUE : type;
        data = Map.copyOf(data);
    }

    /** Names its keys, never their values. */
    @Override
    public String toString() {
        return "TypedSecret[type=" + type + ", keys=" + new java.util.TreeSet<>(data.keySet()) + "]";
    }
}
