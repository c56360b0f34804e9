package dev.drover.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * CHANGELOG.md keeps the Keep a Changelog form that release tooling and readers rely on, and SECURITY.md says how to
 * report a vulnerability and what is in scope.
 */
class ReleaseFilesTest {

    private static final Path ROOT = Path.of("..");
    private static final Set<String> CATEGORIES =
            Set.of("Added", "Changed", "Deprecated", "Removed", "Fixed", "Security");
    private static final Pattern RELEASE = Pattern.compile("## \\[(\\d+\\.\\d+\\.\\d+)] - (\\d{4}-\\d{2}-\\d{2})");

    @Test
    void theChangelogHasUnreleasedFirstThenReleasesNewestFirstEachWithKnownCategoriesAndALink() throws IOException {
        List<String> lines = Files.readAllLines(ROOT.resolve("CHANGELOG.md"));
        assertThat(lines.getFirst()).isEqualTo("# Changelog");
        List<String> sections = lines.stream().filter(l -> l.startsWith("## ")).toList();
        assertThat(sections.getFirst()).isEqualTo("## [Unreleased]");
        List<String> versions = new ArrayList<>();
        String previousDate = "9999-12-31";
        for (String section : sections.subList(1, sections.size())) {
            Matcher release = RELEASE.matcher(section);
            assertThat(release.matches()).as("a release heading: %s", section).isTrue();
            assertThat(release.group(2)).as("releases newest first").isLessThanOrEqualTo(previousDate);
            previousDate = release.group(2);
            versions.add(release.group(1));
        }
        lines.stream()
                .filter(l -> l.startsWith("### "))
                .forEach(l -> assertThat(CATEGORIES).contains(l.substring(4)));
        assertThat(lines).anyMatch(l -> l.startsWith("[Unreleased]: https://"));
        for (String version : versions) {
            assertThat(lines).anyMatch(l -> l.startsWith("[" + version + "]: https://"));
        }
    }

    @Test
    void theChangelogNamesThePomsNextVersion() throws IOException {
        Matcher pom = Pattern.compile("<version>(\\d+\\.\\d+\\.\\d+)-SNAPSHOT</version>")
                .matcher(Files.readString(ROOT.resolve("pom.xml")));
        assertThat(pom.find()).isTrue();
        String changelog = Files.readString(ROOT.resolve("CHANGELOG.md"));
        assertThat(changelog).doesNotContain("## [" + pom.group(1) + "]").contains(pom.group(1));
    }

    @Test
    void theSecurityPolicySaysHowToReportPrivatelyAndWhatIsInScope() throws IOException {
        String policy = Files.readString(ROOT.resolve("SECURITY.md"));
        assertThat(policy)
                .contains("## Reporting a vulnerability", "## Supported versions", "## In scope", "## Out of scope")
                .contains("https://github.com/drover-dev/drover/security/advisories/new");
        assertThat(Files.readString(ROOT.resolve("README.md"))).contains("(SECURITY.md)", "(CHANGELOG.md)");
    }
}
