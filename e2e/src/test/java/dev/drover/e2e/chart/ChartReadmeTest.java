package dev.drover.e2e.chart;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ChartReadmeTest {

    @Test
    void readmeDocumentsEveryValue() throws IOException {
        String readme = Files.readString(DroverChart.DIR.resolve("README.md"));
        JsonNode values = new ObjectMapper(new YAMLFactory())
                .readTree(DroverChart.DIR.resolve("values.yaml").toFile());
        List<String> leaves = new ArrayList<>();
        collect(values, "", leaves);
        assertThat(leaves).hasSizeGreaterThan(30);
        for (String leaf : leaves) {
            assertThat(documented(readme, leaf))
                    .as("charts/drover/README.md documents %s (or a parent key)", leaf)
                    .isTrue();
        }
    }

    @Test
    void readmeListsEveryRuleOfTheClusterRole() throws IOException {
        String readme = Files.readString(DroverChart.DIR.resolve("README.md"));
        ClusterRole role = DroverChart.parse(Files.readString(Manifests.DIR.resolve("drover.yaml"))).stream()
                .filter(ClusterRole.class::isInstance)
                .map(ClusterRole.class::cast)
                .findFirst()
                .orElseThrow();
        assertThat(role.getRules()).isNotEmpty();
        for (PolicyRule rule : role.getRules()) {
            for (String group : rule.getApiGroups()) {
                for (String resource : rule.getResources()) {
                    String row = "| `" + (group.isEmpty() ? "\"\"" : group) + "` | `" + resource + "` | "
                            + String.join(", ", rule.getVerbs()) + " |";
                    assertThat(readme)
                            .as("charts/drover/README.md's RBAC table has the row %s", row)
                            .contains(row);
                }
            }
        }
    }

    @Test
    void everyValueIsCommentedInValuesYaml() throws IOException {
        List<String> lines = Files.readAllLines(DroverChart.DIR.resolve("values.yaml"));
        for (int i = 0; i < lines.size(); i++) {
            if (isKey(lines.get(i)) && !lines.get(i).trim().endsWith(":")) {
                assertThat(commentedHereOrAbove(lines, i))
                        .as(
                                "values.yaml line %d (%s), or the key it belongs to, has a comment above it",
                                i + 1, lines.get(i).trim())
                        .isTrue();
            }
        }
    }

    /** True when this key line, or one of the keys it is nested in, has a comment line right above it. */
    private static boolean commentedHereOrAbove(List<String> lines, int index) {
        int indent = Integer.MAX_VALUE;
        for (int i = index; i >= 0; i--) {
            String line = lines.get(i);
            if (isKey(line) && indent(line) < indent) {
                if (i > 0 && lines.get(i - 1).trim().startsWith("#")) {
                    return true;
                }
                indent = indent(line);
            }
        }
        return false;
    }

    private static boolean isKey(String line) {
        return line.matches("^\\s*[A-Za-z][A-Za-z0-9_./-]*:.*");
    }

    private static int indent(String line) {
        return line.length() - line.stripLeading().length();
    }

    private static boolean documented(String readme, String key) {
        for (String prefix = key;
                !prefix.isEmpty();
                prefix = prefix.contains(".") ? prefix.substring(0, prefix.lastIndexOf('.')) : "") {
            if (readme.contains("`" + prefix + "`")) {
                return true;
            }
        }
        return false;
    }

    private static void collect(JsonNode node, String path, List<String> out) {
        if (node.isObject() && !node.isEmpty()) {
            node.properties()
                    .forEach(e -> collect(e.getValue(), path.isEmpty() ? e.getKey() : path + "." + e.getKey(), out));
        } else {
            out.add(path);
        }
    }
}
