package dev.drover.devices;

import dev.drover.deviceplugin.DeviceInstance;
import io.prometheus.client.Collector;
import io.prometheus.client.GaugeMetricFamily;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;

/**
 * The node's devices as Prometheus gauges, labelled as dcgm-exporter labels GPUs, so that dashboards and alerts
 * written for it work: {@code gpu} (the GPU's NVML index; for a MIG device its GPU's; where the plugin does not tell,
 * the instance's index in its group), {@code UUID} (the GPU's; for a MIG device its GPU's), {@code pci_bus_id},
 * {@code modelName} (a MIG device's GPU's model), {@code Hostname} (the node), and for a MIG device
 * {@code GPU_I_PROFILE} and {@code GPU_I_ID}; then {@code vendor}, {@code type}, and {@code namespace},
 * {@code allocation} and {@code task} of the reservation holding it. A label without a value is empty (Prometheus
 * drops it). A value the device does not report is left out, not reported as 0.
 */
public final class DeviceMetrics extends Collector {

    private static final List<String> LABELS = List.of(
            "gpu",
            "UUID",
            "pci_bus_id",
            "modelName",
            "Hostname",
            "GPU_I_PROFILE",
            "GPU_I_ID",
            "vendor",
            "type",
            "namespace",
            "allocation",
            "task");

    /** How NVML names a MIG device: its GPU's name, " MIG ", its profile ("NVIDIA A100-SXM4-40GB MIG 3g.20gb"). */
    private static final String MIG = " MIG ";

    private final DeviceManager devices;
    private final DeviceLedger ledger;
    private final String hostname;

    /** @param hostname the node's name, the {@code Hostname} label */
    public DeviceMetrics(DeviceManager devices, DeviceLedger ledger, String hostname) {
        this.devices = devices;
        this.ledger = ledger;
        this.hostname = hostname;
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
            List<String> labels = labels(d, holders.get(d.instance().id()));
            healthy.addMetric(labels, d.healthy() ? 1 : 0);
            devices.stats(d.instance().id()).ifPresent(s -> {
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

    private List<String> labels(DeviceManager.Device d, DeviceLedger.Holder h) {
        DeviceInstance instance = d.instance();
        String model = d.group().model();
        String index;
        String uuid;
        String profile = "";
        String gpuInstance = "";
        if (instance.gpu().isPresent()) {
            DeviceInstance.GpuSlot slot = instance.gpu().get();
            index = Integer.toString(slot.index());
            uuid = slot.gpuUuid();
            if (slot.gpuInstanceId().isPresent()) {
                gpuInstance = Integer.toString(slot.gpuInstanceId().getAsInt());
                int mig = model.lastIndexOf(MIG);
                if (mig >= 0) {
                    profile = model.substring(mig + MIG.length());
                    model = model.substring(0, mig);
                }
            }
        } else {
            List<DeviceInstance> siblings = d.group().instances();
            int i = 0;
            while (i < siblings.size() && !siblings.get(i).id().equals(instance.id())) {
                i++;
            }
            index = Integer.toString(i);
            uuid = instance.id();
        }
        return List.of(
                index,
                uuid,
                instance.pciBusId().orElse(""),
                model,
                hostname,
                profile,
                gpuInstance,
                d.group().vendor(),
                d.group().type(),
                h == null ? "" : h.alloc().namespace(),
                h == null ? "" : h.alloc().name(),
                h == null ? "" : h.task());
    }

    private static void add(GaugeMetricFamily family, List<String> labels, OptionalDouble value) {
        value.ifPresent(v -> family.addMetric(labels, v));
    }
}
