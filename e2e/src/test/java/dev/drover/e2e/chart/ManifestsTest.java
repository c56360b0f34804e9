package dev.drover.e2e.chart;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** manifests/ is the chart rendered with default values; it fails when they drift apart. */
class ManifestsTest {

    @Test
    void manifestsMatchTheChart() throws IOException {
        boolean update = Boolean.getBoolean("drover.updateManifests");
        for (Map.Entry<String, String> file : Manifests.expected().entrySet()) {
            Path path = Manifests.DIR.resolve(file.getKey());
            if (update) {
                Files.createDirectories(Manifests.DIR);
                Files.writeString(path, file.getValue());
            }
            assertThat(Files.exists(path))
                    .as("%s is missing; create it with: %s", path, Manifests.REFRESH)
                    .isTrue();
            assertThat(Files.readString(path))
                    .as("%s differs from the chart's output; refresh it with: %s", path, Manifests.REFRESH)
                    .isEqualTo(file.getValue());
        }
        try (var files = Files.list(Manifests.DIR)) {
            assertThat(files.map(p -> p.getFileName().toString()))
                    .as("manifests/ holds only generated files")
                    .containsExactlyInAnyOrderElementsOf(Manifests.expected().keySet());
        }
    }

    @Test
    void manifestsInstallTheCrdAndTheNamespaceBeforeAnythingThatNeedsThem() throws IOException {
        List<HasMetadata> crds = DroverChart.parse(Files.readString(Manifests.DIR.resolve("crds.yaml")));
        assertThat(crds)
                .singleElement()
                .isInstanceOfSatisfying(
                        CustomResourceDefinition.class,
                        crd -> assertThat(crd.getMetadata().getName()).isEqualTo("allocations.drover.dev"));
        List<HasMetadata> rest = DroverChart.parse(Files.readString(Manifests.DIR.resolve("drover.yaml")));
        assertThat(rest.getFirst()).isInstanceOf(Namespace.class);
        assertThat(rest.getFirst().getMetadata().getName()).isEqualTo(DroverChart.NAMESPACE);
        assertThat(rest.subList(1, rest.size())).allSatisfy(o -> {
            if (o.getMetadata().getNamespace() != null) {
                assertThat(o.getMetadata().getNamespace()).isEqualTo(DroverChart.NAMESPACE);
            }
        });
        assertThat("crds.yaml").as("kubectl applies files in name order").isLessThan("drover.yaml");
    }
}
