package dev.drover.state;

/**
 * Identifies an allocation on this node. Both parts become directory names and
 * store keys elsewhere, so they are held to Kubernetes' own rules, exactly
 * those an API server applies: the namespace a DNS-1123 label, the name a
 * DNS-1123 subdomain (at most 253 characters, parts joined by dots; unlike a
 * DNS name, a part may be longer than 63). Any stricter rule here would leave
 * an allocation the API server accepted unrun and undeletable. Neither part can
 * hold '/', the separator of store keys, nor be '.' or '..'.
 */
public record AllocId(String namespace, String name) {

    private static final int MAX_LABEL_LENGTH = 63;

    private static final int MAX_NAME_LENGTH = 253;

    public AllocId {
        requireLabel("namespace", namespace);
        requireSubdomain("name", name);
    }

    /** The store key, {@code namespace/name}. */
    public String key() {
        return namespace + "/" + name;
    }

    /** The store key of one of this allocation's tasks, {@code namespace/name/task}. */
    public String taskKey(String task) {
        requireLabel("task name", task);
        return namespace + '/' + name + '/' + task;
    }

    /** Parses {@code namespace/name}, the form {@link #key()} and the command line use. */
    public static AllocId parse(String key) {
        int slash = key.indexOf('/');
        if (slash < 0) {
            throw new IllegalArgumentException(
                    "allocation id '" + key + "' must have the form namespace/name, e.g. default/hello");
        }
        return new AllocId(key.substring(0, slash), key.substring(slash + 1));
    }

    @Override
    public String toString() {
        return key();
    }

    static void requireLabel(String field, String value) {
        if (value == null || value.isEmpty()) {
            throw new IllegalArgumentException(field + " must not be empty");
        }
        if (!isLabel(value)) {
            throw new IllegalArgumentException(
                    field + " '" + value + "' is not a DNS-1123 label: use at most " + MAX_LABEL_LENGTH
                            + " lower-case letters, digits and '-', starting and ending with a letter or digit");
        }
    }

    static void requireSubdomain(String field, String value) {
        if (value == null || value.isEmpty()) {
            throw new IllegalArgumentException(field + " must not be empty");
        }
        boolean ok = value.length() <= MAX_NAME_LENGTH;
        for (String part : value.split("\\.", -1)) {
            ok &= !part.isEmpty() && isAlphanumericWithDashes(part);
        }
        if (!ok) {
            throw new IllegalArgumentException(field + " '" + value + "' is not a DNS-1123 subdomain: use at most "
                    + MAX_NAME_LENGTH + " characters, lower-case letters, digits, '-' and '.', each part starting and"
                    + " ending with a letter or digit");
        }
    }

    /** [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63 long; by hand, as it runs on every state write. */
    private static boolean isLabel(String value) {
        return value.length() <= MAX_LABEL_LENGTH && isAlphanumericWithDashes(value);
    }

    /** [a-z0-9]([-a-z0-9]*[a-z0-9])? of any length. */
    private static boolean isAlphanumericWithDashes(String value) {
        int n = value.length();
        for (int i = 0; i < n; i++) {
            char c = value.charAt(i);
            boolean alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
            if (!alnum && !(c == '-' && i > 0 && i < n - 1)) {
                return false;
            }
        }
        return true;
    }
}
