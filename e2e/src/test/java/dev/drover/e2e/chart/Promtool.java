package dev.drover.e2e.chart;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Prometheus' promtool, when this machine has one: the system property {@code drover.promtool}, else the environment
 * variable {@code DROVER_PROMTOOL}, else {@code promtool} on the PATH, else the one .ci/run fetches into the
 * repository's target/promtool.
 */
public record Promtool(Path executable) {

    public static final String HOW =
            "promtool not found (set -Ddrover.promtool=PATH or DROVER_PROMTOOL, or put promtool on the PATH;"
                    + " Debian: apt-get download prometheus && dpkg-deb -x prometheus_*.deb DIR gives"
                    + " DIR/usr/bin/promtool)";

    public static Optional<Promtool> find() {
        List<String> candidates = new ArrayList<>();
        candidates.add(System.getProperty("drover.promtool", ""));
        candidates.add(System.getenv().getOrDefault("DROVER_PROMTOOL", ""));
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            if (!dir.isEmpty()) {
                candidates.add(Path.of(dir, "promtool").toString());
            }
        }
        candidates.add(
                Path.of("..", "target", "promtool", "usr", "bin", "promtool").toString());
        return candidates.stream()
                .filter(c -> !c.isBlank())
                .map(c -> Path.of(c).toAbsolutePath()) // promtool runs in another directory
                .filter(Files::isExecutable)
                .findFirst()
                .map(Promtool::new);
    }

    /** What a run printed, and its exit code. */
    public record Result(int exitCode, String output) {}

    /**
     * {@code promtool check metrics} on {@code scrape}, a scrape in Prometheus' text format: exit code 0 when it
     * parses and its lint finds nothing.
     */
    public Result checkMetrics(Path dir, String scrape) throws IOException, InterruptedException {
        return runWithInput(dir, scrape, "check", "metrics");
    }

    /** Runs {@code promtool ARGS...} in {@code dir}, for at most a minute. */
    Result run(Path dir, String... args) throws IOException, InterruptedException {
        return runWithInput(dir, "", args);
    }

    private Result runWithInput(Path dir, String input, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(executable.toString());
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command)
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .start();
        byte[] out;
        try {
            try (var stdin = p.getOutputStream()) {
                stdin.write(input.getBytes(StandardCharsets.UTF_8));
            }
            out = p.getInputStream().readAllBytes();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                throw new AssertionError("promtool " + String.join(" ", args) + " took over a minute");
            }
        } finally {
            p.destroyForcibly();
        }
        return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8));
    }
}
