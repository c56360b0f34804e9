package dev.drover.local;

import dev.drover.agent.Agent;
import dev.drover.agent.AgentConfig;
import dev.drover.agent.ConfigException;
import dev.drover.agent.StopSignal;
import dev.drover.bench.Bench;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * {@code java -jar drover-local.jar COMMAND}: the local dev cluster.
 * <pre>
 *   apiserver --kubeconfig FILE [--port N] [--nodes a,b] [--kube-version 1.N]
 *   up --kubeconfig FILE [--data-dir DIR] [--port N] [--metrics-port N] [--api-port N] [--kube-version 1.N]
 * </pre>
 */
public final class LocalMain {

    static final String USAGE = """
            usage: java -jar drover-local.jar COMMAND [FLAGS]

            commands:
              apiserver --kubeconfig FILE [--port N] [--nodes a,b] [--kube-version 1.N]
                        [--agent-kubeconfigs DIR] [--chart DIR]
                  Start a local Kubernetes API server with the Drover CRD, write a kubeconfig
                  for kubectl, print a line with "ready" and serve until SIGTERM or Ctrl-C.
                  --agent-kubeconfigs applies the chart's ServiceAccount and RBAC and writes
                  DIR/NODE.kubeconfig for each node: the agent's identity there, a token bound to
                  the node, renewed before it expires; and DIR/NODE.peer-token (0600), its token
                  for other agents (audience drover.dev/agent: the agent's --peer-token-file);
                  it also runs the chart's gateway (files in DIR/gateway), which serves the
                  aggregated API agent.drover.dev (kubectl drover logs|stats) through this server;
                  run each agent with --gateway-user system:serviceaccount:drover-system:drover-gateway
                  --gateway-ca-file DIR/gateway/ca.crt (the CA of the gateway's client certificate).
                  --chart (default charts/drover) is the chart.
                  --port 0 (the default) picks a free port. --kube-version (1.25 to 1.32, default
                  the newest) behaves as that version where Drover depends on it: before 1.31 CRDs
                  lose selectableFields, so a field selector on spec.nodeName is refused.

              up --kubeconfig FILE [--data-dir DIR] [--port N] [--metrics-port N] [--api-port N]
                 [--device-plugin fake:FILE]... [--kube-version 1.N] [--chart DIR]
                  The same API server plus the Drover agent for node "local" in this process, with the
                  mock and raw_exec drivers enabled: kubectl apply an Allocation and watch it run.
                  The agent runs as the chart's ServiceAccount, with the chart's RBAC, from the
                  kubeconfig agent-local.kubeconfig beside FILE (and its peer token agent-local.peer-token);
                  the chart's gateway runs too (files in gateway/ beside FILE), for kubectl drover logs.
                  DIR (default .drover-local/data) holds the agent's state and allocation directories;
                  --metrics-port (default 0: a free port) serves /metrics, /healthz and /readyz;
                  --api-port (default 0: a free port) serves the agent's HTTPS API (docs/api.md);
                  --device-plugin runs a device plugin, e.g. fake:examples/devices/fake-gpus.yaml;
                  --kube-version as for apiserver; before 1.31 the agent runs with --field-selector=false.

            """ + Bench.usage();

    static final String LOCAL_NODE = "local";

    private LocalMain() {}

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    static int run(String[] args, PrintStream out, PrintStream err) {
        if (args.length == 0 || args[0].equals("help") || args[0].equals("--help") || args[0].equals("-h")) {
            (args.length == 0 ? err : out).print(USAGE);
            return args.length == 0 ? 2 : 0;
        }
        try {
            return switch (args[0]) {
                case "apiserver" -> apiserver(Arrays.copyOfRange(args, 1, args.length), out);
                case "up" -> up(Arrays.copyOfRange(args, 1, args.length), out, err);
                case "bench" ->
                    Bench.run(Arrays.copyOfRange(args, 1, args.length), out, err, LocalMain.class.getName());
                default -> throw new UsageException("unknown command \"" + args[0] + "\"");
            };
        } catch (UsageException | Bench.UsageException e) {
            err.println("drover-local: " + e.getMessage());
            err.print(USAGE);
            return 2;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 1;
        } catch (Exception e) {
            err.println("drover-local: " + e.getMessage());
            return 1;
        }
    }

    private static int apiserver(String[] args, PrintStream out) throws IOException {
        Path kubeconfig = null;
        int port = 0;
        List<String> nodes = new ArrayList<>();
        String kubeVersion = null;
        Path agentKubeconfigs = null;
        Path chart = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--agent-kubeconfigs" -> agentKubeconfigs = Path.of(value(args, ++i, "--agent-kubeconfigs"));
                case "--chart" -> chart = Path.of(value(args, ++i, "--chart"));
                case "--kubeconfig" -> kubeconfig = Path.of(value(args, ++i, "--kubeconfig"));
                case "--port" -> port = port(value(args, ++i, "--port"));
                case "--kube-version" -> kubeVersion = value(args, ++i, "--kube-version");
                case "--nodes" ->
                    nodes.addAll(Arrays.stream(value(args, ++i, "--nodes").split(","))
                            .map(String::trim)
                            .filter(s -> !s.isEmpty())
                            .toList());
                default -> throw new UsageException("unknown flag \"" + args[i] + "\"");
            }
        }
        if (kubeconfig == null) {
            throw new UsageException("apiserver needs --kubeconfig FILE (where to write the kubeconfig for kubectl)");
        }
        LocalApiServer.Options options = LocalApiServer.Options.defaults()
                .withPort(port)
                .withNodes(nodes)
                .withKubeconfig(kubeconfig);
        LocalApiServer server = LocalApiServer.start(options.withKubeVersion(kubeVersion(kubeVersion)));
        List<AutoCloseable> running = new ArrayList<>();
        if (agentKubeconfigs != null) {
            try {
                AgentIdentity identity = AgentIdentity.install(server, chart == null ? Charts.locate() : chart);
                for (String node : nodes) {
                    running.add(identity.renew(
                            node,
                            agentKubeconfigs.resolve(node + ".kubeconfig"),
                            agentKubeconfigs.resolve(node + ".peer-token")));
                }
                running.add(identity.startGateway(agentKubeconfigs.resolve("gateway")));
            } catch (IOException | RuntimeException e) {
                closeAll(running);
                server.close();
                throw e;
            }
        }
        StopSignal stop = StopSignal.install();
        out.println("drover-local apiserver ready at " + server.url() + " (kubeconfig " + kubeconfig.toAbsolutePath()
                + ")");
        out.flush();
        stop.await();
        closeAll(running);
        server.close();
        out.println("drover-local apiserver stopped");
        return 0;
    }

    private static int up(String[] args, PrintStream out, PrintStream err) throws IOException {
        Path kubeconfig = null;
        Path dataDir = Path.of(".drover-local", "data");
        int port = 0;
        int metricsPort = 0;
        int apiPort = 0;
        List<String> plugins = new ArrayList<>();
        KubeVersion kubeVersion = KubeVersion.NEWEST;
        Path chart = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--chart" -> chart = Path.of(value(args, ++i, "--chart"));
                case "--kube-version" -> kubeVersion = kubeVersion(value(args, ++i, "--kube-version"));
                case "--kubeconfig" -> kubeconfig = Path.of(value(args, ++i, "--kubeconfig"));
                case "--data-dir" -> dataDir = Path.of(value(args, ++i, "--data-dir"));
                case "--device-plugin" -> plugins.add(value(args, ++i, "--device-plugin"));
                case "--port" -> port = port(value(args, ++i, "--port"));
                case "--metrics-port" -> metricsPort = port(value(args, ++i, "--metrics-port"));
                case "--api-port" -> apiPort = port(value(args, ++i, "--api-port"));
                default -> throw new UsageException("unknown flag \"" + args[i] + "\"");
            }
        }
        if (kubeconfig == null) {
            throw new UsageException("up needs --kubeconfig FILE (where to write the kubeconfig for kubectl)");
        }
        Path agentKubeconfig = kubeconfig.resolveSibling("agent-" + LOCAL_NODE + ".kubeconfig");
        Path peerToken = kubeconfig.resolveSibling("agent-" + LOCAL_NODE + ".peer-token");
        List<String> agentArgs;
        try {
            agentArgs = new ArrayList<>(List.of(
                    "--node",
                    LOCAL_NODE,
                    "--data-dir",
                    dataDir.toString(),
                    "--kubeconfig",
                    agentKubeconfig.toString(),
                    "--peer-token-file",
                    peerToken.toString(),
                    "--enable-raw-exec",
                    "--metrics-port",
                    Integer.toString(metricsPort),
                    "--api-port",
                    Integer.toString(apiPort)));
            plugins.forEach(p -> agentArgs.addAll(List.of("--device-plugin", p)));
            if (!kubeVersion.selectableFields()) {
                agentArgs.addAll(List.of("--field-selector", "false")); // what docs/install.md tells such users
            }
            AgentConfig.load(agentArgs, Map.of()); // a bad flag is told before anything starts
        } catch (ConfigException e) {
            throw new UsageException(e.getMessage());
        }
        Path gatewayDir = agentKubeconfig.toAbsolutePath().getParent().resolve("gateway");
        LocalApiServer server = LocalApiServer.start(LocalApiServer.Options.defaults()
                .withPort(port)
                .withNodes(List.of(LOCAL_NODE))
                .withKubeconfig(kubeconfig)
                .withKubeVersion(kubeVersion));
        List<AutoCloseable> running = new ArrayList<>();
        Agent agent;
        try {
            AgentIdentity identity = AgentIdentity.install(server, chart == null ? Charts.locate() : chart);
            running.add(identity.renew(LOCAL_NODE, agentKubeconfig, peerToken));
            running.add(identity.startGateway(gatewayDir));
            agentArgs.addAll(identity.gatewayArgs(gatewayDir)); // the gateway's user and its client CA, as the chart's
            agent = Agent.start(config(agentArgs)); // its own client, from the kubeconfig just written
        } catch (IOException | RuntimeException e) {
            closeAll(running);
            server.close();
            err.println("drover-local: the agent cannot start: " + e.getMessage());
            return 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            closeAll(running);
            server.close();
            return 1;
        }
        StopSignal stop = StopSignal.install();
        out.println("drover-local ready: API server at " + server.url() + ", agent for node \"" + LOCAL_NODE
                + "\" (data " + dataDir.toAbsolutePath() + ", metrics http://127.0.0.1:" + agent.metricsPort()
                + "/metrics, API https://127.0.0.1:" + agent.apiPort() + ")");
        out.println("  export KUBECONFIG=" + kubeconfig.toAbsolutePath() + "; kubectl apply -f examples/hello.yaml");
        out.flush();
        stop.await();
        agent.close(); // tasks keep running until the next "up", whose empty API server makes its agent destroy them
        closeAll(running);
        server.close();
        out.println("drover-local stopped");
        return 0;
    }

    /** The agent's settings from {@code args}, checked once already. */
    private static AgentConfig config(List<String> args) {
        try {
            return AgentConfig.load(args, Map.of());
        } catch (ConfigException e) {
            throw new IllegalStateException("the agent's flags were taken before: " + e.getMessage(), e);
        }
    }

    /** Closes what was started, the last first. */
    private static void closeAll(List<AutoCloseable> running) {
        for (AutoCloseable r : running.reversed()) {
            try {
                r.close();
            } catch (Exception e) {
                System.err.println("drover-local: stopping " + r + ": " + e);
            }
        }
    }

    /** The version {@code --kube-version} names, or the newest when it is not given (null). */
    private static KubeVersion kubeVersion(String text) {
        try {
            return text == null ? KubeVersion.NEWEST : KubeVersion.parse(text);
        } catch (IllegalArgumentException e) {
            throw new UsageException("--kube-version: " + e.getMessage());
        }
    }

    private static String value(String[] args, int i, String flag) {
        if (i >= args.length) {
            throw new UsageException(flag + " needs a value");
        }
        return args[i];
    }

    private static int port(String s) {
        try {
            int p = Integer.parseInt(s);
            if (p < 0 || p > 65535) {
                throw new NumberFormatException();
            }
            return p;
        } catch (NumberFormatException e) {
            throw new UsageException("--port " + s + " is not a port number (0-65535)");
        }
    }

    static final class UsageException extends RuntimeException {
        UsageException(String message) {
            super(message);
        }
    }
}
