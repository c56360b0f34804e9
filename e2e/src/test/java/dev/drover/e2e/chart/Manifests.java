package dev.drover.e2e.chart;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The plain manifests under {@code manifests/}, as they must be: the chart
 * rendered with its default values for release {@code drover} in namespace
 * {@code drover-system}. {@code kubectl apply -f manifests/} reads the files in
 * name order, so {@code crds.yaml} (the CRD) comes before {@code drover.yaml}
 * (the namespace first, then everything else).
 */
final class Manifests {

    static final Path DIR = Path.of("..", "manifests");
    static final String REFRESH = "./mvnw -B -pl e2e test -Dtest=ManifestsTest -Ddrover.updateManifests=true";

    private static final String HEADER = """
            # Generated from charts/drover (%s) by %s.
            # Do not edit: change the chart, then refresh with
            #   %s
            """;

    private Manifests() {}

    /** File name → expected contents. */
    static Map<String, String> expected() {
        Map<String, String> files = new LinkedHashMap<>();
        files.put("crds.yaml", header("its crds/ directory") + crds());
        files.put(
                "drover.yaml",
                header("helm template " + DroverChart.RELEASE + " charts/drover --namespace " + DroverChart.NAMESPACE)
                        + namespace()
                        + DroverChart.template(ValueSet.DEFAULTS, Map.of()));
        return files;
    }

    private static String header(String how) {
        return HEADER.formatted(how, "ManifestsTest", REFRESH);
    }

    private static String namespace() {
        return """
                ---
                apiVersion: v1
                kind: Namespace
                metadata:
                  name: %s
                  labels:
                    app.kubernetes.io/part-of: drover
                    # The agent mounts a hostPath, which only the privileged Pod Security level admits.
                    pod-security.kubernetes.io/enforce: privileged
                """.formatted(DroverChart.NAMESPACE);
    }

    private static String crds() {
        StringBuilder out = new StringBuilder();
        try (var files = Files.list(DroverChart.DIR.resolve("crds"))) {
            for (Path crd : files.sorted().toList()) {
                String text = Files.readString(crd);
                out.append(text.stripLeading().startsWith("---") ? "" : "---\n").append(text);
                if (!text.endsWith("\n")) {
                    out.append('\n');
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString();
    }
}
