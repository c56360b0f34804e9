package dev.drover.deviceplugin.nvidia;

import dev.drover.deviceplugin.DevicePlugin;
import dev.drover.deviceplugin.DevicePluginException;
import dev.drover.deviceplugin.DevicePluginFactory;
import dev.drover.deviceplugin.PluginClock;
import java.util.Map;

/** Makes {@link NvidiaDevicePlugin}s; {@code nvidia:PATH} names the NVML library to load. */
public final class NvidiaPluginFactory implements DevicePluginFactory {

    private final PluginClock clock;

    public NvidiaPluginFactory() {
        this(PluginClock.system());
    }

    public NvidiaPluginFactory(PluginClock clock) {
        this.clock = clock;
    }

    @Override
    public String name() {
        return NvidiaDevicePlugin.NAME;
    }

    @Override
    public DevicePlugin create() {
        return new NvidiaDevicePlugin(clock);
    }

    @Override
    public Map<String, Object> configFromArgument(String argument) {
        return argument.isEmpty() ? Map.of() : Map.of("library", argument);
    }

    @Override
    public void checkConfig(Map<String, Object> config) throws DevicePluginException {
        NvidiaConfig.read(NvidiaDevicePlugin.NAME, config);
    }
}
