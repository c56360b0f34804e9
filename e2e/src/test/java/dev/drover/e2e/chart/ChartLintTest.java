package dev.drover.e2e.chart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.marcnuri.helm.LintResult;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class ChartLintTest {

    /**
     * Helm command lines to lint with besides helm-java's bundled Helm 3: a colon-separated list of binaries
     * (.ci/run fetches Helm 3 and Helm 4 there), and {@code helm} on PATH.
     */
    private static final String HELM_BINARIES = "DROVER_HELM_BINARIES";

    @Test
    void strictLintPasses() {
        LintResult lint = DroverChart.helm().lint().strict().call();
        assertThat(lint.isFailed())
                .as("helm lint --strict: %s", lint.getMessages())
                .isFalse();
        assertThat(lint.getMessages())
                .as("nothing above INFO")
                .allMatch(m -> m.startsWith("[INFO]"), "is an [INFO] message");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("helmBinaries")
    void strictLintPassesWithEachHelmCliPresent(Path helm) throws IOException, InterruptedException {
        assumeTrue(
                helm != null,
                "no Helm CLI: set " + HELM_BINARIES + " or put helm on PATH (.ci/run fetches Helm 3 and 4 from npm)");
        String version = run(helm, "version", "--short");
        String lint = run(helm, "lint", "--strict", "--kube-version", DroverChart.KUBE_VERSION, "charts/drover");
        assertThat(lint).as("%s: %s", version, lint).contains("1 chart(s) linted, 0 chart(s) failed");
        assertThat(lint.lines().filter(l -> l.startsWith("[")))
                .as("%s: nothing above INFO", version)
                .allMatch(l -> l.startsWith("[INFO]"), "is an [INFO] message");
    }

    static Stream<Path> helmBinaries() {
        Set<Path> found = new LinkedHashSet<>();
        String listed = System.getenv(HELM_BINARIES);
        if (listed != null) {
            for (String each : listed.split(File.pathSeparator)) {
                if (!each.isBlank() && Files.isExecutable(Path.of(each))) {
                    found.add(Path.of(each));
                }
            }
        }
        String path = System.getenv("PATH");
        for (String dir : path == null ? new String[0] : path.split(File.pathSeparator)) {
            Path helm = Path.of(dir, "helm");
            if (!dir.isBlank() && Files.isExecutable(helm)) {
                found.add(helm);
                break;
            }
        }
        List<Path> binaries = new ArrayList<>(found);
        if (binaries.isEmpty()) {
            binaries.add(null);
        }
        return binaries.stream();
    }

    static String run(Path helm, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(helm.toString()));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command)
                .directory(DroverChart.DIR.resolve("..", "..").toFile())
                .redirectErrorStream(true)
                .start();
        process.getOutputStream().close();
        byte[] out = process.getInputStream().readAllBytes();
        assertThat(process.waitFor(60, TimeUnit.SECONDS))
                .as("%s finishes", command)
                .isTrue();
        return new String(out, StandardCharsets.UTF_8);
    }
}
