package dev.drover.cli.kube;

import dev.drover.common.UserText;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** A kubeconfig's fields read with their types checked: a wrong type is one sentence naming the field. */
final class Fields {

    /** Fields whose value may be a credential (an exec env's value too), besides the {@code *-data} ones. */
    private static final Set<String> SECRETS = Set.of("token", "password", "value");

    private Fields() {}

    /** A scalar field as text (YAML may read {@code 8443} or {@code true} as a number or a boolean); null if absent. */
    static String string(Map<?, ?> map, String key, String where) throws KubeconfigException {
        Object v = map.get(key);
        if (v == null) {
            return null;
        }
        if (v instanceof Map<?, ?> || v instanceof List<?>) {
            throw new KubeconfigException(where + ": " + key + " must be a string, not " + shown(key, v));
        }
        return v.toString();
    }

    static boolean bool(Map<?, ?> map, String key, String where) throws KubeconfigException {
        String v = string(map, key, where);
        if (v == null || v.equals("false")) {
            return false;
        }
        if (v.equals("true")) {
            return true;
        }
        throw new KubeconfigException(where + ": " + key + " must be true or false, not " + UserText.quote(v));
    }

    static Map<?, ?> map(Map<?, ?> map, String key, String where) throws KubeconfigException {
        Object v = map.get(key);
        if (v == null) {
            return null;
        }
        if (!(v instanceof Map<?, ?> m)) {
            throw new KubeconfigException(where + ": " + key + " must be a map, not " + shown(key, v));
        }
        return m;
    }

    static List<?> list(Map<?, ?> map, String key, String where) throws KubeconfigException {
        Object v = map.get(key);
        if (v == null) {
            return List.of();
        }
        if (!(v instanceof List<?> l)) {
            throw new KubeconfigException(where + ": " + key + " must be a list, not " + shown(key, v));
        }
        return l;
    }

    /**
     * A wrongly typed value as an error shows it: a secret's ({@code token}, {@code password}, a {@code *-data}
     * field: a key, say) only by its type, anything else as it is, cut.
     */
    static String shown(String key, Object v) {
        if (!SECRETS.contains(key) && !key.endsWith("-data")) {
            return UserText.value(v);
        }
        return v instanceof Map<?, ?>
                ? "a map"
                : v instanceof List<?> ? "a list" : "a " + v.getClass().getSimpleName();
    }

    /** A {@code *-data} field: base64 of the bytes; null if absent. */
    static byte[] base64(Map<?, ?> map, String key, String where) throws KubeconfigException {
        String v = string(map, key, where);
        if (v == null || v.isEmpty()) {
            return null;
        }
        try {
            return Base64.getDecoder().decode(v.replaceAll("\\s+", ""));
        } catch (IllegalArgumentException e) {
            throw new KubeconfigException(where + ": " + key + " is not base64");
        }
    }
}
