package dev.drover.network;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The command line that runs a CNI plugin. The agent runs plugins directly ({@link #DIRECT}), in its own network
 * namespace, which is the node's; tests run them in a namespace of their own, behind {@code nsenter --net=FILE}
 * ({@link #prefixed}), so the bridges and rules they make stay there.
 */
@FunctionalInterface
public interface PluginLauncher {

    /** The plugin binary itself, run in the agent's network namespace. */
    PluginLauncher DIRECT = plugin -> List.of(plugin.toString());

    /** The command line that runs {@code plugin} (an absolute path), with no arguments of its own. */
    List<String> command(Path plugin);

    /** {@code prefix} then the plugin, e.g. {@code nsenter --net=/tmp/node --}. */
    static PluginLauncher prefixed(List<String> prefix) {
        List<String> head = List.copyOf(prefix);
        return plugin -> {
            List<String> argv = new ArrayList<>(head);
            argv.add(plugin.toString());
            return argv;
        };
    }
}
