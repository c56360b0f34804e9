package dev.drover.local;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/** A request's query parameters, decoded, in order. */
record Query(Map<String, String> params) {

    static Query parse(String raw) {
        Map<String, String> out = new LinkedHashMap<>();
        if (raw != null && !raw.isEmpty()) {
            for (String pair : raw.split("&")) {
                int eq = pair.indexOf('=');
                String k = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
                String v = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
                out.put(k, v);
            }
        }
        return new Query(out);
    }

    String get(String name) {
        return params.get(name);
    }

    boolean isWatch() {
        String w = params.get("watch");
        return "true".equals(w) || "1".equals(w);
    }
}
