package dev.drover.e2e.chart;

import java.nio.file.Path;
import java.util.Optional;

/** The value files the chart is rendered with in tests; each stands for one way users install it. */
enum ValueSet {
    DEFAULTS(null),
    RAW_EXEC("raw-exec.yaml"),
    GPU_MONITORING("gpu-monitoring.yaml"),
    CUSTOM("custom.yaml");

    private static final Path DIR = Path.of("src", "test", "resources", "chart-values");

    private final String file;

    ValueSet(String file) {
        this.file = file;
    }

    Optional<Path> valuesFile() {
        return Optional.ofNullable(file).map(DIR::resolve);
    }
}
