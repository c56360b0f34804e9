package dev.drover.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code kubectl drover stats}: the agent's usage report ({@code GET .../stats}, docs/api.md) as tables, in the
 * spirit of {@code nomad alloc status -stats}. A figure the agent did not report shows as {@code -}; text from the
 * agent is cleaned as {@link TerminalText#clean} does.
 */
final class AllocStats {

    private AllocStats() {}

    static String render(JsonNode stats) {
        StringBuilder out = new StringBuilder();
        out.append("Allocation ")
                .append(TerminalText.clean(stats.path("allocation").asText("?")))
                .append(" on node ")
                .append(TerminalText.clean(stats.path("node").asText("?")))
                .append(", CPU measured over ")
                .append(number(stats.path("windowSeconds").asDouble()))
                .append(" s\n\n");
        List<List<String>> rows = new ArrayList<>();
        rows.add(List.of("Task", "State", "CPU", "CPU Time", "Memory"));
        for (Map.Entry<String, JsonNode> e : stats.path("tasks").properties()) {
            JsonNode usage = e.getValue().path("resourceUsage");
            String error = e.getValue().path("error").asText(null);
            rows.add(List.of(
                    e.getKey(),
                    e.getValue().path("state").asText("?"),
                    error != null
                            ? "(" + error + ")"
                            : percent(usage.path("cpu").path("percent")),
                    seconds(usage.path("cpu").path("seconds")),
                    bytes(usage.path("memory").path("rssBytes"))));
        }
        JsonNode total = stats.path("resourceUsage");
        rows.add(List.of(
                "(all)",
                "",
                percent(total.path("cpu").path("percent")),
                seconds(total.path("cpu").path("seconds")),
                bytes(total.path("memory").path("rssBytes"))));
        table(rows, out);

        List<List<String>> devices = new ArrayList<>();
        devices.add(List.of("Task", "Device", "GPU", "Memory", "Temperature", "Power"));
        for (Map.Entry<String, JsonNode> e : stats.path("tasks").properties()) {
            for (JsonNode d : e.getValue().path("devices")) {
                devices.add(List.of(
                        e.getKey(),
                        d.path("id").asText("?"),
                        percent(d.path("gpuUtilPercent")),
                        memory(d),
                        unit(d.path("temperatureC"), " °C"),
                        unit(d.path("powerW"), " W")));
            }
        }
        for (JsonNode g : stats.path("devices")) {
            List<String> ids = new ArrayList<>();
            g.path("ids").forEach(id -> ids.add(id.asText()));
            devices.add(List.of(
                    "(all)",
                    g.path("vendor").asText() + "/" + g.path("type").asText() + "/"
                            + g.path("model").asText() + " " + ids,
                    percent(g.path("gpuUtilPercent")),
                    memory(g),
                    unit(g.path("temperatureC"), " °C"),
                    unit(g.path("powerW"), " W")));
        }
        if (devices.size() > 1) {
            out.append("\nDevices\n");
            table(devices, out);
        }
        return out.toString();
    }

    private static void table(List<List<String>> rows, StringBuilder out) {
        out.append(TerminalText.columns(rows.stream()
                .map(r -> r.stream().map(TerminalText::clean).toArray(String[]::new))
                .toList()));
    }

    private static String percent(JsonNode n) {
        return n.isNumber() ? number(n.asDouble()) + " %" : "-";
    }

    private static String seconds(JsonNode n) {
        return n.isNumber() ? number(n.asDouble()) + " s" : "-";
    }

    private static String unit(JsonNode n, String unit) {
        return n.isNumber() ? number(n.asDouble()) + unit : "-";
    }

    private static String memory(JsonNode d) {
        JsonNode used = d.path("memoryUsedMiB");
        JsonNode total = d.path("memoryTotalMiB");
        if (!used.isNumber()) {
            return "-";
        }
        return used.asLong() + (total.isNumber() ? "/" + total.asLong() : "") + " MiB";
    }

    private static String bytes(JsonNode n) {
        if (!n.isNumber()) {
            return "-";
        }
        double b = n.asDouble();
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
        int u = 0;
        while (b >= 1024 && u < units.length - 1) {
            b /= 1024;
            u++;
        }
        return number(b) + " " + units[u];
    }

    /** At most two decimals, none when whole. */
    private static String number(double d) {
        return d == Math.rint(d) && Math.abs(d) < 1e15
                ? Long.toString((long) d)
                : String.format(Locale.ROOT, "%.2f", d).replaceAll("0$", "");
    }
}
