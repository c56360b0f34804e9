package dev.drover;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The shape of the benchmarks' main code (the JMH benchmarks and the load harness), read from its sources: no file
 * is over {@value #MAX_LINES} lines, so a class that grows past it is split by responsibility into collaborators
 * (CONTRIBUTING.md), not excused.
 */
class ArchitectureTest {

    /** The most lines a main source file may have. */
    static final int MAX_LINES = 450;

    /** The module's main sources; surefire runs in the module's directory. */
    private static final Path MAIN = Path.of("src", "main", "java");

    @Test
    void noMainSourceFileIsOverTheLineLimit() throws IOException {
        List<Path> sources;
        try (Stream<Path> files = Files.walk(MAIN)) {
            sources = files.filter(f -> f.toString().endsWith(".java")).sorted().toList();
        }
        assertThat(sources).as("Java sources under %s", MAIN.toAbsolutePath()).isNotEmpty();
        List<String> over = new ArrayList<>();
        for (Path source : sources) {
            int lines = Files.readAllLines(source, StandardCharsets.UTF_8).size();
            if (lines > MAX_LINES) {
                over.add(MAIN.relativize(source) + " has " + lines + " lines");
            }
        }
        assertThat(over)
                .as("main source files over %d lines: split each by responsibility (CONTRIBUTING.md)", MAX_LINES)
                .isEmpty();
    }
}
