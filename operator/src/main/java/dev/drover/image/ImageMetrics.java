package dev.drover.image;

import io.prometheus.client.Collector;
import io.prometheus.client.Counter;
import io.prometheus.client.GaugeMetricFamily;
import io.prometheus.client.Histogram;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * The node's images as Prometheus series (docs/metrics.md): how long pulls take and how much they fetch, how many
 * found the image on the node, and what the store holds, read from it at scrape time.
 */
public final class ImageMetrics extends Collector {

    private final Histogram pullSeconds = Histogram.build(
                    "drover_image_pull_seconds",
                    "Time of image pulls that fetched something, from the first registry request to the image stored.")
            .buckets(0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800)
            .create();
    private final Counter pullBytes = Counter.build(
                    "drover_image_pull_bytes_total", "Bytes of layers and configs fetched from registries by pulls.")
            .create();
    private final Counter cacheHits = Counter.build(
                    "drover_image_cache_hits_total",
                    "Pulls that fetched nothing: the node held the image (or another pull was fetching it).")
            .create();
    /** How many images the store holds and their bytes, read at scrape time. */
    private final Callable<long[]> totals;

    ImageMetrics(Callable<long[]> totals) {
        this.totals = totals;
    }

    /** {@code told}, with what each pull comes to counted here first. */
    PullListener observing(PullListener told) {
        return new PullListener() {
            @Override
            public void downloading(ImageReference image, long bytes, long total) {
                told.downloading(image, bytes, total);
            }

            @Override
            public void downloaded(ImageReference image, long bytes, Duration took, boolean cached) {
                if (cached) {
                    cacheHits.inc();
                } else {
                    pullSeconds.observe(took.toNanos() / 1e9);
                    pullBytes.inc(bytes);
                }
                told.downloaded(image, bytes, took, cached);
            }
        };
    }

    @Override
    public List<MetricFamilySamples> collect() {
        List<MetricFamilySamples> out = new ArrayList<>();
        out.addAll(pullSeconds.collect());
        out.addAll(pullBytes.collect());
        out.addAll(cacheHits.collect());
        long[] held;
        try {
            held = totals.call();
        } catch (Exception unreadable) {
            return out; // a store that cannot be listed now has no size to tell
        }
        long images = held[0];
        long bytes = held[1];
        out.add(new GaugeMetricFamily(
                "drover_image_store_bytes", "What the root file systems of the node's images hold, unpacked.", bytes));
        out.add(new GaugeMetricFamily("drover_image_store_images", "Images the node holds.", images));
        return out;
    }
}
