package dev.drover.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class BuildInfoTest {

    static Properties props(String version, String revision) {
        Properties p = new Properties();
        if (version != null) {
            p.setProperty("version", version);
        }
        if (revision != null) {
            p.setProperty("revision", revision);
        }
        return p;
    }

    @Test
    void missingOrOddValuesReadUnknown() {
        assertThat(BuildInfo.of(new Properties(), "25.0.1+8"))
                .isEqualTo(new BuildInfo("unknown", "unknown", "25.0.1+8"));
        assertThat(BuildInfo.of(props("1.2.3", "a\"b\nc"), "")).isEqualTo(new BuildInfo("1.2.3", "unknown", "unknown"));
        assertThat(BuildInfo.of(props("x".repeat(65), " abc123 "), "25"))
                .isEqualTo(new BuildInfo("unknown", "abc123", "25"));
    }

    /** What kubectl drover version reads of each agent: the values its metrics say, on its Node. */
    @Test
    void theNodeCarriesTheAgentsVersionAndRevision() {
        assertThat(BuildInfo.of(props("1.2.3", "abc123"), "25").nodeAnnotations())
                .containsExactlyInAnyOrderEntriesOf(
                        java.util.Map.of("drover.dev/agent-version", "1.2.3", "drover.dev/agent-revision", "abc123"));
    }

    @Test
    void theBuildRecordsItsVersionAndTheCheckoutsCommit() throws Exception {
        BuildInfo built = BuildInfo.current();
        assertThat(built.version()).matches("\\d+\\.\\d+\\.\\d+.*");
        assertThat(built.javaVersion()).isEqualTo(Runtime.version().toString());
        String head = System.getenv("DROVER_REVISION") != null ? System.getenv("DROVER_REVISION") : gitHead();
        if (head != null) {
            assertThat(built.revision()).isEqualTo(head);
        } else {
            assertThat(built.revision()).isEqualTo("unknown");
        }
    }

    @Test
    void aScrapeCarriesTheBuild() throws Exception {
        BuildInfo built = BuildInfo.current();
        String body = MetricsServerTest.scrape(MetricsServerTest.metrics(), null);
        assertThat(body)
                .contains("drover_build_info{version=\"" + built.version() + "\",revision=\"" + built.revision()
                        + "\",java_version=\"" + built.javaVersion() + "\",} 1.0");
    }

    /** The commit the build saw, when this is a git checkout with git installed; null otherwise. */
    private static String gitHead() throws InterruptedException {
        try {
            Process git = new ProcessBuilder(
                            "git", "-C", Path.of("").toAbsolutePath().toString(), "rev-parse", "HEAD")
                    .redirectErrorStream(true)
                    .start();
            String out = new String(git.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            if (!git.waitFor(30, TimeUnit.SECONDS)) {
                git.destroyForcibly();
                return null;
            }
            return git.exitValue() == 0 ? out : null;
        } catch (IOException e) {
            return null;
        }
    }
}
