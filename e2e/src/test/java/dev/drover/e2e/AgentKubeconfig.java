package dev.drover.e2e;

import dev.drover.local.AgentIdentity;
import dev.drover.local.LocalApiServer;
import java.io.IOException;
import java.nio.file.Path;

/**
 * Every agent these tests start runs as a real install's does: as the chart's ServiceAccount, with the chart's RBAC,
 * on a token bound to its Pod on its node (the chart DaemonSet's, which {@link AgentIdentity} creates). A request
 * the chart does not allow fails the test.
 */
final class AgentKubeconfig {

    static final Path CHART = Path.of("..", "charts", "drover");

    private AgentKubeconfig() {}

    /** Applies the chart's RBAC and writes {@code dir/agent-NODE.kubeconfig} for the agent of {@code node}. */
    static Path forNode(LocalApiServer server, String node, Path dir) throws IOException {
        Path file = dir.resolve("agent-" + node + ".kubeconfig");
        AgentIdentity.install(server, CHART).writeKubeconfig(node, file);
        return file;
    }

    /**
     * Writes {@code dir/agent-NODE.peer-token}, the token the agent of {@code node} shows other agents (audience
     * drover.dev/agent, bound to the Node), as the chart's projected volume gives it: its {@code --peer-token-file}.
     */
    static Path peerToken(LocalApiServer server, String node, Path dir) throws IOException {
        Path file = dir.resolve("agent-" + node + ".peer-token");
        AgentIdentity.install(server, CHART).writePeerToken(node, file);
        return file;
    }

    /**
     * {@code args} and the flags a DaemonSet agent has for the chart's gateway ({@link #gateway}, with files in
     * {@code dir/gateway}): the user its token names and the CA of its client certificate, which the gateway writes
     * when it starts (an agent started before reads it when it appears).
     */
    static String[] withGateway(LocalApiServer server, Path dir, String... args) {
        java.util.List<String> all = new java.util.ArrayList<>(java.util.List.of(args));
        all.addAll(AgentIdentity.install(server, CHART).gatewayArgs(dir.resolve("gateway")));
        return all.toArray(String[]::new);
    }

    /**
     * Runs the chart's gateway for the cluster (files in {@code dir/gateway}), so that {@code kubectl drover
     * logs|stats} and {@code kubectl get --raw /apis/agent.drover.dev/...} reach the agents through the API server.
     */
    static dev.drover.local.LocalGateway gateway(LocalApiServer server, Path dir) throws IOException {
        return AgentIdentity.install(server, CHART).startGateway(dir.resolve("gateway"));
    }
}
