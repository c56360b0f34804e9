package dev.drover.agent;

import dev.drover.common.Durations;
import dev.drover.common.UserText;
import dev.drover.deviceplugin.DevicePlugin;
import dev.drover.deviceplugin.DevicePlugins;
import dev.drover.deviceplugin.Fingerprint;
import dev.drover.deviceplugin.FingerprintValidator;
import dev.drover.deviceplugin.InstanceStats;
import dev.drover.deviceplugin.InvalidFingerprintException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One device plugin as {@code drover-agent devices} runs it: made and configured from its selection as the agent's
 * device manager does, every call bounded by a deadline and run on a platform thread of its own (the nvidia plugin
 * blocks in native code), and closed with every thread it ran joined. A failure is one sentence naming the plugin.
 */
final class PluginSession implements AutoCloseable {

    /** What the longest wait for a thread abandoned at its deadline is, once the plugin is closed. */
    static final Duration JOIN_BOUND = Duration.ofSeconds(5);
    /** The longest an error message of a plugin shows. */
    private static final int MESSAGE_LIMIT = 500;

    /** A plugin call failed, timed out or answered nonsense; the message is one sentence without the program. */
    static final class Failure extends Exception {
        Failure(String message) {
            super(message);
        }
    }

    private final DevicePlugins.Selection selection;
    private final String name;
    private final Duration deadline;
    private final DevicePlugin plugin;
    private final List<Thread> calls = new ArrayList<>();
    private boolean closed;

    private PluginSession(DevicePlugins.Selection selection, Duration deadline) {
        this.selection = selection;
        this.name = selection.factory().name();
        this.deadline = deadline;
        this.plugin = selection.factory().create();
    }

    /** A new plugin of {@code selection}, not configured yet; each of its calls waited for at most {@code deadline}. */
    static PluginSession create(DevicePlugins.Selection selection, Duration deadline) {
        return new PluginSession(selection, deadline);
    }

    /** Configures the plugin with its selection's settings, as the agent starts it. */
    void configure() throws Failure {
        call("configure", deadline, () -> {
            plugin.configure(selection.config());
            return null;
        });
    }

    String name() {
        return name;
    }

    /** The plugin's version, as it tells it before it is configured. */
    String version() {
        return plugin.info().version();
    }

    /** The devices now, checked as the agent checks them. */
    Fingerprint fingerprint() throws Failure {
        return valid(call("fingerprint", deadline, plugin::fingerprint));
    }

    /** The fingerprint once it differs from {@code since}, or {@code since} again after {@code wait}. */
    Fingerprint awaitChange(Fingerprint since, Duration wait) throws Failure {
        return valid(call("awaitChange", wait.plus(deadline), () -> plugin.awaitChange(since, wait)));
    }

    /** One statistics sample of each instance the plugin measures. */
    List<InstanceStats> stats() throws Failure {
        return call("stats", deadline, plugin::stats);
    }

    private Fingerprint valid(Fingerprint fp) throws Failure {
        try {
            return FingerprintValidator.validate(name, fp);
        } catch (InvalidFingerprintException e) {
            throw new Failure("the " + name + " plugin's fingerprint is invalid: " + text(e.getMessage()));
        }
    }

    private <T> T call(String what, Duration limit, Callable<T> call) throws Failure {
        CompletableFuture<T> result = new CompletableFuture<>();
        Thread t = Thread.ofPlatform()
                .name("drover-devices-" + name)
                .daemon(true)
                .unstarted(() -> {
                    try {
                        result.complete(call.call());
                    } catch (Throwable e) {
                        result.completeExceptionally(e);
                    }
                });
        synchronized (calls) {
            calls.add(t);
        }
        t.start();
        try {
            return result.get(limit.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            throw new Failure(
                    "the " + name + " plugin's " + what + " did not return within " + Durations.format(limit));
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            String message = cause.getMessage() == null ? cause.toString() : cause.getMessage();
            String verb = what.equals("configure") ? "cannot start" : what + " failed";
            throw new Failure("the " + name + " plugin " + verb + ": " + text(message));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Failure("interrupted while waiting for the " + name + " plugin's " + what);
        }
    }

    private static String text(String message) {
        return UserText.cutEscaped(message, MESSAGE_LIMIT);
    }

    /**
     * Closes the plugin (which joins its own threads) and joins every call thread, each for at most
     * {@link #JOIN_BOUND}: a call the close did not end is stuck in native code and is left to the JVM's exit.
     *
     * @return whether every thread ended
     */
    boolean closeAndJoin() {
        close();
        List<Thread> threads;
        synchronized (calls) {
            threads = List.copyOf(calls);
        }
        boolean all = true;
        for (Thread t : threads) {
            try {
                all &= t.join(JOIN_BOUND);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return all;
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        try {
            // nvidia's close() waits for a configure() still running: bound it like any call
            call("close", deadline, () -> {
                plugin.close();
                return null;
            });
        } catch (Failure e) {
            // what failed was said already, or the process ends anyway
        }
    }
}
