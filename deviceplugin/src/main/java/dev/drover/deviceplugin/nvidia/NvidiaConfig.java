package dev.drover.deviceplugin.nvidia;

import dev.drover.common.ConfigReader;
import dev.drover.deviceplugin.DevicePluginException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Configuration of the nvidia plugin.
 *
 * @param library           NVML library name or path ({@code libnvidia-ml.so.1})
 * @param quietPeriod       how long a GPU must go without a critical error to be healthy again
 * @param applicationXids   XIDs that do not mark a GPU unhealthy
 * @param eventPollInterval how long the event thread waits in NVML at a time; bounds how long close() takes
 * @param gpus              which GPUs the plugin manages ({@code devices}, {@code excludeDevices})
 */
public record NvidiaConfig(
        String library,
        Duration quietPeriod,
        Set<Integer> applicationXids,
        Duration eventPollInterval,
        GpuSelection gpus) {

    public static final Duration DEFAULT_QUIET_PERIOD = Duration.ofMinutes(5);
    public static final Duration DEFAULT_EVENT_POLL = Duration.ofMillis(500);

    public NvidiaConfig {
        applicationXids = Set.copyOf(applicationXids);
    }

    /** Reads the plugin's {@code config}; a problem names the {@code plugin} in its message. */
    static NvidiaConfig read(String plugin, Map<String, Object> config) throws DevicePluginException {
        ConfigReader r = new ConfigReader(config);
        String library = Objects.requireNonNullElse(r.string("library"), Nvml.DEFAULT_LIBRARY);
        Duration quiet = Objects.requireNonNullElse(r.duration("quietPeriod"), DEFAULT_QUIET_PERIOD);
        List<Integer> xids =
                Objects.requireNonNullElse(r.integers("applicationXids"), List.copyOf(XidHealth.APPLICATION_XIDS));
        Duration poll = Objects.requireNonNullElse(r.duration("eventPollInterval"), DEFAULT_EVENT_POLL);
        GpuSelection gpus = GpuSelection.read(r);
        if (quiet.isZero()) {
            r.problem("config.quietPeriod: must be longer than 0 (e.g. 5m)");
        }
        if (poll.isZero()) {
            r.problem("config.eventPollInterval: must be longer than 0 (e.g. 1s)");
        }
        DevicePluginException.checkConfig(plugin, r);
        return new NvidiaConfig(library, quiet, Set.copyOf(xids), poll, gpus);
    }
}
