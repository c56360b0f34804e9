package dev.drover.metrics;

import io.prometheus.client.Collector.MetricFamilySamples;
import io.prometheus.client.Collector.Type;
import io.prometheus.client.CollectorRegistry;
import io.prometheus.client.exporter.common.TextFormat;
import java.io.IOException;
import java.io.Writer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;

/**
 * Writes a registry's series in a Prometheus text format, without the {@code *_created} series simpleclient adds to
 * every counter, histogram and summary. Those carry the series' start time as a value: an extra series per counter
 * that no dashboard or alert of ours reads. simpleclient only drops them when the environment variable
 * {@code PROMETHEUS_DISABLE_CREATED_SERIES} is set, which the agent cannot set for itself (and a user's environment
 * should not change what it serves), so they are left out here, whatever the environment says.
 */
public final class Exposition {

    private Exposition() {}

    /** Writes {@code registry}'s series to {@code out} in {@code contentType} (one {@link TextFormat} offers). */
    public static void write(String contentType, Writer out, CollectorRegistry registry) throws IOException {
        TextFormat.writeFormat(contentType, out, withoutCreated(registry.metricFamilySamples()));
    }

    static Enumeration<MetricFamilySamples> withoutCreated(Enumeration<MetricFamilySamples> families) {
        List<MetricFamilySamples> out = new ArrayList<>();
        while (families.hasMoreElements()) {
            out.add(withoutCreated(families.nextElement()));
        }
        return Collections.enumeration(out);
    }

    private static MetricFamilySamples withoutCreated(MetricFamilySamples family) {
        if (family.type != Type.COUNTER && family.type != Type.HISTOGRAM && family.type != Type.SUMMARY) {
            return family;
        }
        String created = family.name + "_created";
        List<MetricFamilySamples.Sample> kept = new ArrayList<>(family.samples.size());
        for (MetricFamilySamples.Sample s : family.samples) {
            if (!s.name.equals(created)) {
                kept.add(s);
            }
        }
        return kept.size() == family.samples.size()
                ? family
                : new MetricFamilySamples(family.name, family.unit, family.type, family.help, kept);
    }
}
