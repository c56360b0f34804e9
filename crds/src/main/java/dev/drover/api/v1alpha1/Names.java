package dev.drover.api.v1alpha1;

/** Kubernetes name grammars, shared by the schema annotations and the validator. */
public final class Names {

    /** A DNS-1123 label: lower-case alphanumerics and '-', starting and ending alphanumeric, at most 63. */
    public static final String DNS1123_LABEL = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";

    /** A DNS-1123 subdomain: labels joined by '.', at most 253 characters. */
    public static final String DNS1123_SUBDOMAIN = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";

    /** An environment variable name as POSIX shells accept it. */
    public static final String ENV_NAME = "^[A-Za-z_][A-Za-z0-9_]*$";

    /** A key of a Secret's or ConfigMap's data, as Kubernetes allows it (and so a safe file name). */
    public static final String DATA_KEY = "^[-._a-zA-Z0-9]+$";

    /** A device request: {@code <type>}, {@code <vendor>/<type>} or {@code <vendor>/<type>/<model>}. */
    public static final String DEVICE_NAME = "^[^/\\s]+(/[^/\\s]+(/[^/]+)?)?$";

    private Names() {}

    public static boolean isLabel(String s) {
        return s != null && s.length() <= 63 && s.matches(DNS1123_LABEL);
    }

    public static boolean isSubdomain(String s) {
        return s != null && s.length() <= 253 && s.matches(DNS1123_SUBDOMAIN);
    }
}
