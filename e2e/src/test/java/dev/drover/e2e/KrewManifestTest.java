package dev.drover.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.zip.GZIPInputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.junit.jupiter.api.Test;

/**
 * The krew manifest (krew/drover.yaml, filled in by the build as operator/target/krew/drover.yaml) names files that
 * the plugin's archive holds, with the archive's own sha256: what {@code kubectl krew install --manifest
 * --archive} checks.
 */
class KrewManifestTest {

    static final Path TARGET = Path.of("..", "operator", "target");
    static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    @Test
    void theTemplateLeavesTheVersionAndTheSha256ToTheBuild() throws Exception {
        JsonNode template = YAML.readTree(Path.of("..", "krew", "drover.yaml").toFile());
        assertThat(template.path("apiVersion").asText()).isEqualTo("krew.googlecontainertools.github.com/v1alpha2");
        assertThat(template.path("kind").asText()).isEqualTo("Plugin");
        assertThat(template.path("metadata").path("name").asText()).isEqualTo("drover");
        assertThat(template.path("spec").path("caveats").asText()).contains("JDK 25", "JAVA_HOME");
        for (JsonNode platform : template.path("spec").path("platforms")) {
            assertThat(platform.path("sha256").asText()).isEqualTo("@SHA256@");
            assertThat(platform.path("uri").asText()).contains("@VERSION@");
        }
    }

    @Test
    void theBuiltManifestNamesWhatTheArchiveHoldsWithItsSha256() throws Exception {
        Path manifest = TARGET.resolve("krew").resolve("drover.yaml");
        assumeTrue(Files.isRegularFile(manifest), "made by ./mvnw -pl operator package");
        JsonNode spec = YAML.readTree(manifest.toFile()).path("spec");
        String version = spec.path("version").asText();
        assertThat(version).startsWith("v").doesNotContain("@");
        Path archive = TARGET.resolve("kubectl-drover-" + version.substring(1) + ".tar.gz");
        assertThat(archive).exists();
        String sha256 =
                HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(archive)));
        Map<String, TarArchiveEntry> entries = new HashMap<>();
        try (InputStream in = new TarArchiveInputStream(new GZIPInputStream(Files.newInputStream(archive)))) {
            TarArchiveInputStream tar = (TarArchiveInputStream) in;
            for (TarArchiveEntry e; (e = tar.getNextEntry()) != null; ) {
                entries.put(e.getName(), e);
            }
        }
        assertThat(entries)
                .as("the AOT cache, its stamps and the completion helper travel with the launcher")
                .containsKeys(
                        "kubectl-drover.aot",
                        "kubectl-drover.aot.jar",
                        "kubectl-drover.aot.jdk",
                        "kubectl_complete-drover");
        assertThat(entries.get("kubectl-drover.aot").getSize())
                .as("the cache the build recorded for this jar")
                .isPositive();
        assertThat(entries.get("kubectl_complete-drover").getMode() & 0111).isEqualTo(0111);
        assertThat(spec.path("platforms").size()).isEqualTo(2);
        for (JsonNode platform : spec.path("platforms")) {
            assertThat(platform.path("sha256").asText()).isEqualTo(sha256);
            assertThat(platform.path("uri").asText()).endsWith("/" + archive.getFileName());
            for (JsonNode file : platform.path("files")) {
                assertThat(entries).containsKey(file.path("from").asText());
            }
            TarArchiveEntry bin = entries.get(platform.path("bin").asText());
            assertThat(bin).as("the bin is in the archive").isNotNull();
            assertThat(bin.getMode() & 0111).as("and executable").isEqualTo(0111);
            assertThat(entries.get("drover-java").getMode() & 0111).isEqualTo(0111);
        }
    }
}
