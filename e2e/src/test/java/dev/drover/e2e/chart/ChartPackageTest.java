package dev.drover.e2e.chart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.marcnuri.helm.Helm;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeSet;
import java.util.stream.Stream;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The chart archive the build makes (operator/src/main/sh/chart-package.sh): what helm package would. */
class ChartPackageTest {

    /** A chart file larger than this is not one of ours. */
    private static final long MAX_ENTRY = 4 << 20;

    static Path archive() throws IOException {
        String version = new ObjectMapper(new YAMLFactory())
                .readTree(DroverChart.DIR.resolve("Chart.yaml").toFile())
                .path("version")
                .asText();
        Path archive = Path.of("..", "operator", "target", "drover-" + version + ".tgz");
        assertThat(archive).as("built by mvn package in the operator module").exists();
        return archive;
    }

    @Test
    void theArchiveHoldsTheChartsFilesUnderDroverWithItsVersion() throws IOException {
        Map<String, byte[]> entries = read(archive());
        TreeSet<String> expected = new TreeSet<>();
        try (Stream<Path> files = Files.walk(DroverChart.DIR)) {
            files.filter(Files::isRegularFile)
                    .map(f ->
                            "drover/" + DroverChart.DIR.relativize(f).toString().replace('\\', '/'))
                    .forEach(expected::add);
        }
        assertThat(new TreeSet<>(entries.keySet()))
                .as("every file of charts/drover, under drover/")
                .isEqualTo(expected)
                .contains(
                        "drover/Chart.yaml",
                        "drover/values.yaml",
                        "drover/values.schema.json",
                        "drover/templates/gateway.yaml",
                        "drover/crds/allocations.drover.dev-v1.yml");
        for (var e : entries.entrySet()) {
            assertThat(e.getValue())
                    .as("%s as in charts/drover (an older archive? ./mvnw -pl operator package)", e.getKey())
                    .isEqualTo(Files.readAllBytes(
                            DroverChart.DIR.resolve(e.getKey().substring("drover/".length()))));
        }
        assertThat(archive().getFileName().toString())
                .isEqualTo("drover-"
                        + new ObjectMapper(new YAMLFactory())
                                .readTree(entries.get("drover/Chart.yaml"))
                                .path("version")
                                .asText()
                        + ".tgz");
    }

    @Test
    void helmJavaRendersTheArchiveAsTheDirectory() throws IOException {
        String rendered = new Helm(archive().toAbsolutePath())
                .template()
                .withName(DroverChart.RELEASE)
                .withNamespace(DroverChart.NAMESPACE)
                .withKubeVersion(DroverChart.KUBE_VERSION)
                .call();
        assertThat(DroverChart.parse(rendered))
                .extracting(o -> o.getKind() + "/" + o.getMetadata().getName())
                .containsExactlyInAnyOrderElementsOf(
                        DroverChart.render(ValueSet.DEFAULTS).kinds());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.drover.e2e.chart.ChartLintTest#helmBinaries")
    void eachHelmCliLintsAndRendersTheArchive(Path helm) throws Exception {
        assumeTrue(helm != null, "no Helm CLI: set DROVER_HELM_BINARIES or put helm on PATH");
        String archive =
                Path.of("operator", "target").resolve(archive().getFileName()).toString();
        String lint = ChartLintTest.run(helm, "lint", "--strict", "--kube-version", DroverChart.KUBE_VERSION, archive);
        assertThat(lint).contains("1 chart(s) linted, 0 chart(s) failed");
        String rendered = ChartLintTest.run(
                helm, "template", DroverChart.RELEASE, archive, "--kube-version", DroverChart.KUBE_VERSION);
        assertThat(rendered).contains("kind: DaemonSet").contains("kind: APIService");
    }

    /** The regular files of a gzipped ustar archive, by name, in order. */
    static Map<String, byte[]> read(Path tgz) throws IOException {
        Map<String, byte[]> entries = new LinkedHashMap<>();
        try (InputStream in = new GZIPInputStream(Files.newInputStream(tgz))) {
            while (true) {
                byte[] header = in.readNBytes(512);
                if (header.length < 512 || header[0] == 0) {
                    return entries;
                }
                String name = field(header, 0, 100);
                String prefix = field(header, 345, 155);
                if (!prefix.isEmpty()) {
                    name = prefix + "/" + name;
                }
                long size = Long.parseLong(field(header, 124, 12).trim(), 8);
                assertThat(size).as("%s's size", name).isBetween(0L, MAX_ENTRY);
                byte[] body = in.readNBytes((int) size);
                in.skipNBytes((512 - size % 512) % 512);
                char type = (char) header[156];
                if (type == '0' || type == 0) {
                    entries.put(name, body);
                } else {
                    assertThat(type).as("%s is a file or a directory", name).isEqualTo('5');
                }
            }
        }
    }

    private static String field(byte[] header, int offset, int length) {
        int end = offset;
        while (end < offset + length && header[end] != 0) {
            end++;
        }
        return new String(header, offset, end - offset, StandardCharsets.US_ASCII);
    }
}
