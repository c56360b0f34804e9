package dev.drover.bench;

import java.util.List;

/**
 * The spread of one kind of call's wall times, in seconds: how many, their 50th, 90th and 99th percentiles (nearest
 * rank, as {@link Timeline#percentile}) and the longest.
 */
record Spread(int count, double p50, double p90, double p99, double max) {

    static Spread of(List<Double> seconds) {
        List<Double> sorted = seconds.stream().sorted().toList();
        return new Spread(
                sorted.size(),
                Timeline.percentile(sorted, 0.50),
                Timeline.percentile(sorted, 0.90),
                Timeline.percentile(sorted, 0.99),
                sorted.isEmpty() ? 0 : sorted.getLast());
    }
}
