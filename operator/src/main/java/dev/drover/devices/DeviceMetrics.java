package dev.drover.devices;

import dev.drover.deviceplugin.DeviceInstance;
import io.prometheus.client.Collector;
import io.prometheus.client.GaugeMetricFamily;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;

/**
 * The node's devices as Prometheus gauges, labelled like dcgm-exporter
 * ({@code UUID}, {@code gpu}: the instance's index in its group,
 * {@code modelName}) plus {@code namespace}, {@code allocation} and
 * {@code task} of the reservation holding it (empty when free). A value the
 * device does not report is left out, not reported as 0.
 */
public final class DeviceMetrics extends Collector {

    private static final List<String> LABELS =
            List.of("UUID", "gpu", "modelName", "vendor", "type", "namespace", "allocation", "task");

    private final DeviceManager devices;
    private final DeviceLedger ledger;

    public DeviceMetrics(DeviceManager devices, DeviceLedger ledger) {
        this.devices = devices;
        this.ledger = ledger;
    }

    @Override
    public List<MetricFamilySamples> collect() {
        GaugeMetricFamily healthy = new GaugeMetricFamily(
                "drover_device_healthy",
                "1 when the device instance is healthy, 0 when not (or its plugin is down).",
                LABELS);
        GaugeMetricFamily util =
                new GaugeMetricFamily("drover_device_gpu_utilization_percent", "GPU utilization in percent.", LABELS);
        GaugeMetricFamily memUtil = new GaugeMetricFamily(
                "drover_device_memory_utilization_percent", "Memory controller utilization in percent.", LABELS);
        GaugeMetricFamily memUsed =
                new GaugeMetricFamily("drover_device_memory_used_bytes", "Device memory in use, in bytes.", LABELS);
        GaugeMetricFamily memTotal =
                new GaugeMetricFamily("drover_device_memory_total_bytes", "Device memory in total, in bytes.", LABELS);
        GaugeMetricFamily temperature = new GaugeMetricFamily(
                "drover_device_temperature_celsius", "Device temperature in degrees Celsius.", LABELS);
        GaugeMetricFamily power = new GaugeMetricFamily("drover_device_power_watts", "Power draw in watts.", LABELS);
        Map<String, DeviceLedger.Holder> holders = ledger.holders();
        for (DeviceManager.Device d : devices.devices().values()) {
            String id = d.instance().id();
            List<DeviceInstance> siblings = d.group().instances();
            int index = 0;
            while (index < siblings.size() && !siblings.get(index).id().equals(id)) {
                index++;
            }
            DeviceLedger.Holder h = holders.get(id);
            List<String> labels = List.of(
                    id,
                    Integer.toString(index),
                    d.group().model(),
                    d.group().vendor(),
                    d.group().type(),
                    h == null ? "" : h.alloc().namespace(),
                    h == null ? "" : h.alloc().name(),
                    h == null ? "" : h.task());
            healthy.addMetric(labels, d.healthy() ? 1 : 0);
            devices.stats(id).ifPresent(s -> {
                add(util, labels, s.gpuUtilPercent());
                add(memUtil, labels, s.memUtilPercent());
                s.memoryUsedMiB().ifPresent(v -> memUsed.addMetric(labels, v * 1024.0 * 1024.0));
                s.memoryTotalMiB().ifPresent(v -> memTotal.addMetric(labels, v * 1024.0 * 1024.0));
                add(temperature, labels, s.temperatureC());
                add(power, labels, s.powerW());
            });
        }
        return new ArrayList<>(List.of(healthy, util, memUtil, memUsed, memTotal, temperature, power));
    }

    private static void add(GaugeMetricFamily family, List<String> labels, OptionalDouble value) {
        value.ifPresent(v -> family.addMetric(labels, v));
    }
}
