package dev.drover.e2e.chart;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The plain manifests under {@code manifests/}, as they must be: the chart
 * rendered with its default values (the gateway left out) for release {@code drover} in namespace
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

    /**
     * The gateway's serving key would be the same for everyone who applies these files, so they leave it out; Helm
     * makes a certificate for each install.
     */
    private static final String GATEWAY_LEFT_OUT = """
            # The Drover gateway (kubectl drover logs|stats, the APIService
            # v1alpha1.agent.drover.dev) is left out: its certificate must be made for
            # each install, so install it with Helm (docs/install.md).
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
                        + GATEWAY_LEFT_OUT
                        + DroverChart.template(ValueSet.DEFAULTS, Map.of("gateway.enabled", false)));
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
