package dev.drover.local;

import dev.drover.agent.Agent;
import dev.drover.agent.AgentConfig;
import dev.drover.agent.ConfigException;
import java.io.IOException;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What {@code drover-local up} runs in its process: the API server with node {@code local}, the agent's identity
 * (renewed), the chart's gateway and the agent. Closing it stops them, the last started first; the agent's tasks keep
 * running until the next {@code up}, whose empty API server makes its agent destroy them.
 */
final class LocalUp implements AutoCloseable {

    /**
     * What {@code up} was asked.
     *
     * @param bindAddress where the agent's metrics and HTTPS API listen: loopback unless asked, since they are a
     *                    developer's machine's, not a node's
     * @param chart       the chart whose RBAC and gateway run; null: found beside the code
     */
    record Settings(
            Path kubeconfig,
            Path dataDir,
            int port,
            int metricsPort,
            int apiPort,
            InetAddress bindAddress,
            boolean enableOci,
            Path cniBinDir,
            List<String> devicePlugins,
            KubeVersion kubeVersion,
            Path chart,
            java.util.Map<String, String> nodeAllocatable) {

        Path agentKubeconfig() {
            return kubeconfig.resolveSibling("agent-" + LocalMain.LOCAL_NODE + ".kubeconfig");
        }

        Path peerToken() {
            return kubeconfig.resolveSibling("agent-" + LocalMain.LOCAL_NODE + ".peer-token");
        }

        Path gatewayDir() {
            return agentKubeconfig().toAbsolutePath().getParent().resolve("gateway");
        }

        /** How a URL names the bind address: a wildcard as 127.0.0.1, which reaches it from here too. */
        String urlHost() {
            if (bindAddress.isAnyLocalAddress()) {
                return "127.0.0.1";
            }
            return bindAddress instanceof Inet6Address
                    ? "[" + bindAddress.getHostAddress() + "]"
                    : bindAddress.getHostAddress();
        }
    }

    private final LocalApiServer server;
    private final List<AutoCloseable> running;
    private final Agent agent;

    private LocalUp(LocalApiServer server, List<AutoCloseable> running, Agent agent) {
        this.server = server;
        this.running = running;
        this.agent = agent;
    }

    /** The agent's command line for {@code settings}, less the gateway's flags (known once it runs). */
    static List<String> agentArgs(Settings settings) {
        List<String> args = new ArrayList<>(List.of(
                "--node",
                LocalMain.LOCAL_NODE,
                "--data-dir",
                settings.dataDir().toString(),
                "--kubeconfig",
                settings.agentKubeconfig().toString(),
                "--peer-token-file",
                settings.peerToken().toString(),
                "--enable-raw-exec",
                "--metrics-port",
                Integer.toString(settings.metricsPort()),
                "--api-port",
                Integer.toString(settings.apiPort()),
                "--bind-address",
                settings.bindAddress().getHostAddress()));
        if (settings.enableOci()) {
            args.add("--enable-oci");
        }
        if (settings.cniBinDir() != null) {
            args.addAll(List.of(
                    "--cni-bin-dir", settings.cniBinDir().toAbsolutePath().toString()));
        }
        settings.devicePlugins().forEach(p -> args.addAll(List.of("--device-plugin", p)));
        if (!settings.kubeVersion().selectableFields()) {
            args.addAll(List.of("--field-selector", "false")); // what docs/install.md tells such users
        }
        return args;
    }

    /**
     * Starts the API server, then the agent with {@code agentArgs} (checked with {@link AgentConfig#load} before, and
     * the gateway's flags added here).
     */
    static LocalUp start(Settings settings, List<String> agentArgs) throws IOException, InterruptedException {
        LocalApiServer server = LocalApiServer.start(LocalApiServer.Options.defaults()
                .withPort(settings.port())
                .withNodes(List.of(LocalMain.LOCAL_NODE))
                .withKubeconfig(settings.kubeconfig())
                .withKubeVersion(settings.kubeVersion())
                .withNodeAllocatable(settings.nodeAllocatable()));
        List<AutoCloseable> running = new ArrayList<>();
        try {
            AgentIdentity identity =
                    AgentIdentity.install(server, settings.chart() == null ? Charts.locate() : settings.chart());
            running.add(identity.renew(LocalMain.LOCAL_NODE, settings.agentKubeconfig(), settings.peerToken()));
            running.add(identity.startGateway(settings.gatewayDir()));
            List<String> args = new ArrayList<>(agentArgs);
            args.addAll(
                    identity.gatewayArgs(settings.gatewayDir())); // the gateway's user and client CA, as the chart's
            // its own Pod, as the chart's POD_NAME and POD_NAMESPACE name it: from 1.35 it books its allocations there
            AgentIdentity.AgentPod pod = identity.agentPod(LocalMain.LOCAL_NODE);
            args.addAll(List.of("--pod-name", pod.name(), "--pod-namespace", pod.namespace()));
            Agent agent = Agent.start(config(args)); // its own client, from the kubeconfig just written
            return new LocalUp(server, running, agent);
        } catch (IOException | InterruptedException | RuntimeException e) {
            closeAll(running);
            server.close();
            throw e;
        }
    }

    /** The agent's settings from {@code args}, checked once already. */
    private static AgentConfig config(List<String> args) {
        try {
            return AgentConfig.load(args, Map.of());
        } catch (ConfigException e) {
            throw new IllegalStateException("the agent's flags were taken before: " + e.getMessage(), e);
        }
    }

    LocalApiServer server() {
        return server;
    }

    Agent agent() {
        return agent;
    }

    @Override
    public void close() {
        agent.close();
        closeAll(running);
        server.close();
    }

    /** Closes what was started, the last first. */
    static void closeAll(List<AutoCloseable> running) {
        for (AutoCloseable r : running.reversed()) {
            try {
                r.close();
            } catch (Exception e) {
                System.err.println("drover-local: stopping " + r + ": " + e);
            }
        }
    }
}
