package dev.drover.image;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * A registry's {@code WWW-Authenticate} challenge (RFC 7235): its scheme ({@code basic} or {@code bearer}) and
 * parameters ({@code realm}, {@code service}, {@code scope}). Only the first challenge of the header is read;
 * registries send one.
 */
record Challenge(String scheme, Map<String, String> params) {

    /** What a challenge header may hold before it is refused: registries send well under a kilobyte. */
    static final int MAX_LENGTH = 4096;

    /** Reads {@code header}, or empty when it is absent, too long, or not a challenge. */
    static Optional<Challenge> parse(String header) {
        if (header == null || header.length() > MAX_LENGTH) {
            return Optional.empty();
        }
        String h = header.strip();
        int space = h.indexOf(' ');
        String scheme = (space < 0 ? h : h.substring(0, space)).toLowerCase(Locale.ROOT);
        if (scheme.isEmpty() || !scheme.chars().allMatch(c -> Character.isLetterOrDigit(c) || c == '-')) {
            return Optional.empty();
        }
        Map<String, String> params = new LinkedHashMap<>();
        int i = space < 0 ? h.length() : space + 1;
        while (i < h.length()) {
            while (i < h.length() && (h.charAt(i) == ' ' || h.charAt(i) == ',')) {
                i++;
            }
            int eq = h.indexOf('=', i);
            if (eq < 0) {
                break;
            }
            String name = h.substring(i, eq).strip().toLowerCase(Locale.ROOT);
            StringBuilder value = new StringBuilder();
            i = eq + 1;
            if (i < h.length() && h.charAt(i) == '"') {
                i++;
                while (i < h.length() && h.charAt(i) != '"') {
                    if (h.charAt(i) == '\\' && i + 1 < h.length()) {
                        i++;
                    }
                    value.append(h.charAt(i++));
                }
                i++; // the closing quote
            } else {
                while (i < h.length() && h.charAt(i) != ',') {
                    value.append(h.charAt(i++));
                }
            }
            params.putIfAbsent(name, value.toString().strip());
        }
        return Optional.of(new Challenge(scheme, Map.copyOf(params)));
    }

    String param(String name) {
        return params.get(name);
    }
}
