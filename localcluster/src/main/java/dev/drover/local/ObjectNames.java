package dev.drover.local;

import dev.drover.api.v1alpha1.Names;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The names a real API server accepts, with its words for those it refuses: a namespace's name is an RFC 1123 label
 * (at most 63 characters, no dots), every other object's an RFC 1123 subdomain (at most 253 characters), both in
 * lower-case ASCII letters, digits and '-' (and '.' between labels of a subdomain). RBAC objects may have any name
 * that is a path segment ({@code system:basic-user}).
 */
final class ObjectNames {

    /** The grammars Drover's API shares ({@link Names}), as the server's message shows them: without anchors. */
    private static final String LABEL = unanchored(Names.DNS1123_LABEL);

    private static final String SUBDOMAIN = unanchored(Names.DNS1123_SUBDOMAIN);
    private static final Pattern LABEL_NAME = Pattern.compile(LABEL);
    private static final Pattern SUBDOMAIN_NAME = Pattern.compile(SUBDOMAIN);
    private static final int LABEL_MAX = 63;
    private static final int SUBDOMAIN_MAX = 253;

    private ObjectNames() {}

    private static String unanchored(String regex) {
        return regex.substring(1, regex.length() - 1);
    }

    /** What is wrong with {@code name} for an object of {@code type}; empty when a real server takes it. */
    static List<String> problems(ResourceType type, String name) {
        List<String> out = new ArrayList<>();
        if (type.group().equals(Rbac.GROUP)) {
            // RBAC objects are named as path segments (system:discovery), as ValidatePathSegmentName allows
            if (name.equals(".") || name.equals("..")) {
                out.add("may not be '" + name + "'");
            }
            for (String bad : List.of("/", "%")) {
                if (name.contains(bad)) {
                    out.add("may not contain '" + bad + "'");
                }
            }
            return out;
        }
        boolean namespace = type.group().isEmpty() && type.plural().equals("namespaces");
        int max = namespace ? LABEL_MAX : SUBDOMAIN_MAX;
        // Go counts bytes: a name of 253 characters that are not all ASCII is longer than 253 there
        if (name.getBytes(StandardCharsets.UTF_8).length > max) {
            out.add("must be no more than " + max + " characters");
        }
        if (namespace && !LABEL_NAME.matcher(name).matches()) {
            out.add(
                    SUBDOMAIN_NAME.matcher(name).matches()
                            ? "must not contain dots"
                            : "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must"
                                    + " start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used"
                                    + " for validation is '" + LABEL + "')");
        } else if (!namespace && !SUBDOMAIN_NAME.matcher(name).matches()) {
            out.add("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.',"
                    + " and must start and end with an alphanumeric character (e.g. 'example.com', regex used for"
                    + " validation is '" + SUBDOMAIN + "')");
        }
        return out;
    }

    /**
     * The server's answer to an object whose name it refuses: {@code Kind.group "name" is invalid:} and each problem
     * as a field error, in brackets when there is more than one.
     */
    static ApiFront.ApiError invalid(ResourceType type, String name, List<String> problems) {
        String quoted = Json.quote(name);
        List<String> errors = problems.stream()
                .map(p -> "metadata.name: Invalid value: " + quoted + ": " + p)
                .toList();
        String kind = type.group().isEmpty() ? type.kind() : type.kind() + "." + type.group();
        return new ApiFront.ApiError(
                422,
                "Invalid",
                kind + " " + quoted + " is invalid: "
                        + (errors.size() == 1 ? errors.getFirst() : "[" + String.join(", ", errors) + "]"));
    }
}
