package dev.drover.local;

import java.util.List;
import java.util.Locale;

/**
 * What a request's {@code Accept} allows, as kube-apiserver negotiates it: this server writes JSON only, so a
 * request that accepts no JSON (say {@code application/vnd.kubernetes.protobuf} alone, as client-go sends with a
 * protobuf content type) is answered 406 Not Acceptable with a Status naming what it can write, rather than JSON
 * the client cannot read. A list that offers JSON too ({@code application/vnd.kubernetes.protobuf,
 * application/json}) gets JSON.
 */
final class MediaTypes {

    /** What this server writes. */
    static final List<String> PRODUCED = List.of("application/json");

    /** The most media ranges of one {@code Accept} looked at; a longer list is read no further. */
    static final int MAX_RANGES = 64;

    private MediaTypes() {}

    /** Refuses {@code accept} (every {@code Accept} header of the request) when it allows no JSON. */
    static void requireJson(List<String> accept) {
        if (!acceptsJson(accept)) {
            throw new ApiFront.ApiError(
                    406,
                    "NotAcceptable",
                    "only the following media types are accepted: " + String.join(", ", PRODUCED));
        }
    }

    /** True when {@code accept} is absent or empty, or one of its media ranges matches application/json. */
    static boolean acceptsJson(List<String> accept) {
        if (accept == null || accept.stream().allMatch(a -> a == null || a.isBlank())) {
            return true;
        }
        int seen = 0;
        for (String header : accept) {
            if (header == null) {
                continue;
            }
            for (String range : header.split(",", MAX_RANGES + 1)) {
                if (++seen > MAX_RANGES) {
                    return false;
                }
                if (matchesJson(range)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** {@code application/json}, {@code application/*} or {@code *}{@code /*}, with any parameters but {@code q=0}. */
    private static boolean matchesJson(String range) {
        String[] parts = range.split(";");
        String type = parts[0].strip().toLowerCase(Locale.ROOT);
        if (!type.equals("application/json") && !type.equals("application/*") && !type.equals("*/*")) {
            return false;
        }
        for (int i = 1; i < parts.length; i++) {
            String p = parts[i].strip().toLowerCase(Locale.ROOT);
            if (p.startsWith("q=")) {
                try {
                    return Double.parseDouble(p.substring(2)) > 0;
                } catch (NumberFormatException e) {
                    return false;
                }
            }
        }
        return true;
    }
}
