package dev.drover.local;

import java.math.BigDecimal;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/** {@code --node-allocatable cpu=4,memory=8Gi}: what the local cluster's nodes may hold, by resource. */
final class NodeAllocatable {

    private static final Set<String> RESOURCES = Set.of("cpu", "memory", "pods");

    private NodeAllocatable() {}

    /**
     * The resources and quantities {@code text} names, comma-separated {@code RESOURCE=QUANTITY}.
     *
     * @throws IllegalArgumentException in one sentence naming the entry that is not cpu, memory or pods with a
     *     quantity
     */
    static Map<String, String> parse(String text) {
        Map<String, String> out = new LinkedHashMap<>();
        if (text.length() > 1024) {
            throw new IllegalArgumentException("the node allocatable is longer than 1024 characters");
        }
        for (String entry : text.split(",")) {
            String e = entry.trim();
            if (e.isEmpty()) {
                continue;
            }
            int eq = e.indexOf('=');
            String resource = eq < 0 ? e : e.substring(0, eq).trim();
            String amount = eq < 0 ? "" : e.substring(eq + 1).trim();
            BigDecimal value = PodResize.amount(com.fasterxml.jackson.databind.node.TextNode.valueOf(amount));
            if (!RESOURCES.contains(resource) || amount.isEmpty() || value == null || value.signum() < 0) {
                throw new IllegalArgumentException(
                        "\"" + e + "\" is not RESOURCE=QUANTITY for cpu, memory or pods" + " (e.g. cpu=4,memory=8Gi)");
            }
            out.put(resource, amount);
        }
        return out;
    }
}
