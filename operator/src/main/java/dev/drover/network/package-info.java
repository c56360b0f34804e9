/**
 * Allocation networks (issue 40, {@code spec.network.mode}): {@code bridge} gives an allocation a network namespace
 * of its own, shared by its tasks, attached to the node's bridge by the CNI reference plugins with its ports mapped
 * by {@code portmap}; {@code none} a namespace with its loopback only; {@code host} nothing.
 * {@link dev.drover.network.NetNs} keeps the namespaces (nsfs mounts in the agent's data dir),
 * {@link dev.drover.network.CniPlugins} runs a plugin bounded in time and output, and
 * {@link dev.drover.network.AllocNetworks} sets an allocation's network up, checks it after a restart and tears it
 * down, answering an {@link dev.drover.network.AttachedNetwork} the agent keeps in its store.
 *
 * <p>A leaf: it uses the JDK, {@code dev.drover.api}, {@code dev.drover.common}, Jackson and SLF4J, nothing else of
 * the agent. Tests run the real plugins inside a network namespace each test makes, behind a
 * {@link dev.drover.network.PluginLauncher} that enters it.
 */
package dev.drover.network;
