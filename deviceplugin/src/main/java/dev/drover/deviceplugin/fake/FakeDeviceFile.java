package dev.drover.deviceplugin.fake;

import dev.drover.deviceplugin.AttributeValue;
import dev.drover.deviceplugin.DeviceInstance;
import dev.drover.deviceplugin.InstanceStats;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What a fake device file says: the devices, and the faults to act out. Times are durations since the fake
 * host's origin (when its {@link FakePluginFactory} was made), so they survive plugin restarts; call counts
 * are per plugin instance, so a restarted plugin counts from zero.
 */
public record FakeDeviceFile(List<Group> groups, List<Fault> faults) {

    public FakeDeviceFile {
        groups = List.copyOf(groups);
        faults = List.copyOf(faults);
    }

    public record Group(
            String vendor,
            String type,
            String model,
            Map<String, AttributeValue> attributes,
            List<Instance> instances) {
        public Group {
            attributes = Map.copyOf(attributes);
            instances = List.copyOf(instances);
        }
    }

    /**
     * @param stats     values reported by {@code stats()} (timestamp replaced by the time of the call); empty
     *                  when the instance reports no stats
     * @param gpu       the GPU's place (gpuIndex, and for a MIG device migParent and gpuInstanceId), when given
     * @param unhealthy windows in which the instance is unhealthy, whatever {@code healthy} says
     */
    public record Instance(
            String id,
            boolean healthy,
            String healthDescription,
            Optional<String> pciBusId,
            Optional<DeviceInstance.GpuSlot> gpu,
            Optional<InstanceStats> stats,
            List<HealthWindow> unhealthy) {
        public Instance {
            unhealthy = List.copyOf(unhealthy);
        }
    }

    /** Unhealthy from {@code from} until {@code until} (forever when empty). */
    public record HealthWindow(Duration from, Optional<Duration> until, String reason) {
        public boolean covers(Duration elapsed) {
            return elapsed.compareTo(from) >= 0
                    && until.map(u -> elapsed.compareTo(u) < 0).orElse(true);
        }
    }

    /** Which plugin call a fault hits. */
    public enum Call {
        FINGERPRINT,
        STATS,
        RESERVE
    }

    /** What the plugin does wrong. */
    public enum Kind {
        /** The call fails and the plugin is dead: every later call fails too, until it is restarted. */
        CRASH,
        /** The call fails; later calls are judged afresh. */
        ERROR,
        /** The call blocks for {@code duration}, or until the plugin is closed. */
        HANG,
        /** The fingerprint breaks the validator's rules (see {@link InvalidOutput}). */
        INVALID
    }

    /** How an {@link Kind#INVALID} fingerprint is broken. */
    public enum InvalidOutput {
        DUPLICATE_IDS,
        EMPTY_ID,
        EMPTY_VENDOR
    }

    /**
     * A scripted fault: active for call numbers above {@code afterCalls} (counted per call kind and plugin
     * instance, {@code awaitChange} counting as a fingerprint call) while the time since the origin is in
     * [{@code from}, {@code until}).
     */
    public record Fault(
            Kind kind,
            Call call,
            int afterCalls,
            Duration from,
            Optional<Duration> until,
            Optional<Duration> duration,
            InvalidOutput output,
            String message) {

        public boolean activeAt(long callNumber, Duration elapsed) {
            return callNumber > afterCalls
                    && elapsed.compareTo(from) >= 0
                    && until.map(u -> elapsed.compareTo(u) < 0).orElse(true);
        }
    }
}
