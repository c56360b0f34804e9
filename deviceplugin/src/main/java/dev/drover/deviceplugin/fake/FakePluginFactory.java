package dev.drover.deviceplugin.fake;

import dev.drover.deviceplugin.DevicePlugin;
import dev.drover.deviceplugin.DevicePluginException;
import dev.drover.deviceplugin.DevicePluginFactory;
import dev.drover.deviceplugin.PluginClock;
import java.time.Instant;
import java.util.Map;

/**
 * Makes {@link FakeDevicePlugin}s that share one clock and one origin, so a scripted timeline (health flips,
 * time-windowed faults) runs on across plugin restarts the way a real host's would.
 */
public final class FakePluginFactory implements DevicePluginFactory {

    private final PluginClock clock;
    private final Instant origin;

    /** Wall clock; the timeline starts now. Used by {@link java.util.ServiceLoader}. */
    public FakePluginFactory() {
        this(PluginClock.system());
    }

    /** The timeline starts at the clock's current time. */
    public FakePluginFactory(PluginClock clock) {
        this.clock = clock;
        this.origin = clock.now();
    }

    @Override
    public String name() {
        return FakeDevicePlugin.NAME;
    }

    @Override
    public DevicePlugin create() {
        return new FakeDevicePlugin(clock, origin);
    }

    /** {@code fake:FILE} means {@code {file: FILE}}. */
    @Override
    public Map<String, Object> configFromArgument(String argument) {
        return argument.isEmpty() ? Map.of() : Map.of(FakeDevicePlugin.FILE_KEY, argument);
    }

    @Override
    public void checkConfig(Map<String, Object> config) throws DevicePluginException {
        FakeDevicePlugin.checkConfig(config);
    }
}
