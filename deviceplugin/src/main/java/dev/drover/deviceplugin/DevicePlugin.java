package dev.drover.deviceplugin;

import java.time.Duration;
import java.util.List;

/**
 * A source of devices on this host: what is there (fingerprint), how it is doing (stats), and what a task
 * needs to use some of it (reserve).
 *
 * <p>The shape suits a device manager that runs each plugin in plain loops and restarts it with back-off:
 * every call is blocking and may fail or hang; the manager bounds each call by its own deadline and, when a
 * plugin misbehaves, closes it and makes a fresh one from its {@link DevicePluginFactory}. A typical loop:
 *
 * <pre>{@code
 * Fingerprint seen = plugin.fingerprint();
 * publish(seen);                                   // after FingerprintValidator.validate(seen)
 * while (running) {
 *     Fingerprint now = plugin.awaitChange(seen, Duration.ofSeconds(30));
 *     if (!now.equals(seen)) publish(now);
 *     seen = now;
 * }
 * }</pre>
 *
 * <p>Methods may be called from different threads at once. Plugins that talk to native libraries block in
 * native code; call them from platform threads (a virtual thread would pin its carrier).
 */
public interface DevicePlugin extends AutoCloseable {

    /** Name and version; available before {@link #configure}. */
    PluginInfo info();

    /**
     * Applies the plugin's configuration once, before any other call. Unknown keys and bad values fail with a
     * message naming the key, the value and what is expected.
     */
    void configure(java.util.Map<String, Object> config) throws DevicePluginException;

    /** The devices present now, as one full snapshot. */
    Fingerprint fingerprint() throws DevicePluginException, InterruptedException;

    /**
     * Blocks until the fingerprint differs from {@code since} or {@code timeout} passes, then returns the
     * current fingerprint (equal to {@code since} when nothing changed). A {@code null} {@code since} returns
     * at once.
     */
    Fingerprint awaitChange(Fingerprint since, Duration timeout) throws DevicePluginException, InterruptedException;

    /**
     * Current statistics of every instance the plugin can measure, one entry per instance; values the device
     * cannot report are absent. The caller decides how often to ask.
     */
    List<InstanceStats> stats() throws DevicePluginException, InterruptedException;

    /**
     * What a task needs to use these instances (environment, mounts, device nodes). Unknown IDs fail with a
     * message naming them.
     */
    Reservation reserve(List<String> instanceIds) throws DevicePluginException, InterruptedException;

    /** Stops the plugin's threads (joined before returning) and releases native resources. Idempotent. */
    @Override
    void close();
}
