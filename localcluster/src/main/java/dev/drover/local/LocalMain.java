package dev.drover.local;

import dev.drover.agent.AgentConfig;
import dev.drover.agent.ConfigException;
import dev.drover.agent.StopSignal;
import dev.drover.cli.flags.Flag;
import dev.drover.cli.flags.FlagParser;
import dev.drover.cli.flags.ParsedArgs;
import dev.drover.cli.flags.Subcommand;
import dev.drover.cli.flags.UsageError;
import dev.drover.common.UserText;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * {@code java -jar drover-local.jar COMMAND}: the local dev cluster.
 * <pre>
 *   apiserver --kubeconfig FILE [--port N] [--nodes a,b] [--node-allocatable cpu=N,memory=Q] [--kube-version 1.N]
 *   up --kubeconfig FILE [--data-dir DIR] [--port N] [--metrics-port N] [--api-port N] [--bind-address ADDRESS]
 *      [--kube-version 1.N] [--node-allocatable cpu=N,memory=Q]
 * </pre>
 */
public final class LocalMain {

    static final String LOCAL_NODE = "local";

    private LocalMain() {}

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    static int run(String[] args, PrintStream out, PrintStream err) {
        if (args.length == 0 || args[0].equals("help") || args[0].equals("--help") || args[0].equals("-h")) {
            (args.length == 0 ? err : out).print(LocalCommandLine.usage());
            return args.length == 0 ? 2 : 0;
        }
        Subcommand command = LocalCommandLine.command(args[0]);
        if (command == null && args[0].equals("bench")) {
            err.println("drover-local: the load harness is benchmarks/target/drover-bench.jar: run it with"
                    + " bin/drover-local bench, or java -jar benchmarks/target/drover-bench.jar");
            return 2;
        }
        if (command == null) {
            err.println("drover-local: " + (args[0].startsWith("-") ? "unknown flag " : "unknown command ")
                    + UserText.quote(args[0]) + " (commands: apiserver, up)");
            err.print(LocalCommandLine.usage());
            return 2;
        }
        String[] rest = Arrays.copyOfRange(args, 1, args.length);
        try {
            ParsedArgs flags = FlagParser.parse(LocalCommandLine.flags(command), List.of(rest), false);
            if (flags.help()) {
                out.print(LocalCommandLine.usage(command));
                return 0;
            }
            if (!flags.positional().isEmpty()) {
                throw new UsageError(command.name() + " takes flags only, not "
                        + UserText.quote(flags.positional().getFirst()));
            }
            return switch (command.name()) {
                case "apiserver" -> apiserver(flags, out);
                default -> up(flags, out, err);
            };
        } catch (UsageError | UsageException e) {
            err.println("drover-local: " + e.getMessage());
            err.print(LocalCommandLine.usage(command));
            return 2;
        } catch (Exception e) {
            err.println("drover-local: " + e.getMessage());
            return 1;
        }
    }

    private static int apiserver(ParsedArgs flags, PrintStream out) throws IOException {
        Path kubeconfig = path(flags, LocalCommandLine.KUBECONFIG);
        int port = port(flags, LocalCommandLine.PORT);
        List<String> nodes = flags.values(LocalCommandLine.NODES.name()).stream()
                .flatMap(list -> Arrays.stream(list.split(",")))
                .map(String::trim)
                .filter(s -> !s.isEmpty())
                .toList();
        String kubeVersion = flags.value(LocalCommandLine.KUBE_VERSION.name());
        Path agentKubeconfigs = path(flags, LocalCommandLine.AGENT_KUBECONFIGS);
        Path chart = path(flags, LocalCommandLine.CHART);
        if (kubeconfig == null) {
            throw new UsageException("apiserver needs --kubeconfig FILE (where to write the kubeconfig for kubectl)");
        }
        LocalApiServer.Options options = LocalApiServer.Options.defaults()
                .withPort(port)
                .withNodes(nodes)
                .withKubeconfig(kubeconfig);
        options = options.withNodeAllocatable(nodeAllocatable(flags));
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
                LocalUp.closeAll(running);
                server.close();
                throw e;
            }
        }
        StopSignal stop = StopSignal.install();
        out.println("drover-local apiserver ready at " + server.url() + " (kubeconfig " + kubeconfig.toAbsolutePath()
                + ")");
        out.flush();
        stop.await();
        LocalUp.closeAll(running);
        server.close();
        out.println("drover-local apiserver stopped");
        return 0;
    }

    private static int up(ParsedArgs flags, PrintStream out, PrintStream err) throws IOException {
        LocalUp.Settings settings = upSettings(flags);
        Path kubeconfig = settings.kubeconfig();
        List<String> agentArgs = LocalUp.agentArgs(settings);
        try {
            AgentConfig.load(agentArgs, Map.of()); // a bad flag is told before anything starts
        } catch (ConfigException e) {
            throw new UsageException(e.getMessage());
        }
        LocalUp up;
        try {
            up = LocalUp.start(settings, agentArgs);
        } catch (IOException | RuntimeException e) {
            err.println("drover-local: up cannot start: " + e.getMessage()); // the API server, the gateway or the agent
            return 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 1;
        }
        StopSignal stop = StopSignal.install();
        String host = settings.urlHost();
        out.println("drover-local ready: API server at " + up.server().url() + ", agent for node \"" + LOCAL_NODE
                + "\" (data " + settings.dataDir().toAbsolutePath() + ", metrics http://" + host + ":"
                + up.agent().metricsPort() + "/metrics, API https://" + host + ":"
                + up.agent().apiPort() + ")");
        out.println("  export KUBECONFIG=" + kubeconfig.toAbsolutePath() + "; kubectl apply -f examples/hello.yaml");
        out.flush();
        stop.await();
        up.close();
        out.println("drover-local stopped");
        return 0;
    }

    /** What {@code up}'s flags ask, defaults filled in. */
    static LocalUp.Settings upSettings(ParsedArgs flags) {
        Path kubeconfig = path(flags, LocalCommandLine.KUBECONFIG);
        if (kubeconfig == null) {
            throw new UsageException("up needs --kubeconfig FILE (where to write the kubeconfig for kubectl)");
        }
        return new LocalUp.Settings(
                kubeconfig,
                flags.has(LocalCommandLine.DATA_DIR.name())
                        ? path(flags, LocalCommandLine.DATA_DIR)
                        : Path.of(".drover-local", "data"),
                port(flags, LocalCommandLine.PORT),
                port(flags, LocalCommandLine.METRICS_PORT),
                port(flags, LocalCommandLine.API_PORT),
                bindAddress(flags.value(LocalCommandLine.BIND_ADDRESS.name())),
                flags.has(LocalCommandLine.ENABLE_OCI.name()),
                path(flags, LocalCommandLine.CNI_BIN_DIR),
                flags.values(LocalCommandLine.DEVICE_PLUGIN.name()),
                kubeVersion(flags.value(LocalCommandLine.KUBE_VERSION.name())),
                path(flags, LocalCommandLine.CHART),
                nodeAllocatable(flags));
    }

    /** {@code --node-allocatable}: the nodes' allocatable by resource, none (the default node's) when not given. */
    private static Map<String, String> nodeAllocatable(ParsedArgs flags) {
        String text = flags.value(LocalCommandLine.NODE_ALLOCATABLE.name());
        try {
            return text == null ? Map.of() : NodeAllocatable.parse(text);
        } catch (IllegalArgumentException e) {
            throw new UsageException("--node-allocatable: " + e.getMessage());
        }
    }

    /** {@code --bind-address}: an IP address as written, loopback when not given. */
    private static InetAddress bindAddress(String text) {
        if (text == null) {
            return InetAddress.ofLiteral("127.0.0.1");
        }
        try {
            return InetAddress.ofLiteral(text.trim());
        } catch (IllegalArgumentException e) {
            throw new UsageException("--bind-address " + UserText.quote(text)
                    + " is not an IP address (127.0.0.1, the default, serves this machine only; 0.0.0.0 every IPv4"
                    + " interface, :: every interface)");
        }
    }

    /** The version {@code --kube-version} names, or the default when it is not given (null). */
    private static KubeVersion kubeVersion(String text) {
        try {
            return text == null ? KubeVersion.DEFAULT : KubeVersion.parse(text);
        } catch (IllegalArgumentException e) {
            throw new UsageException("--kube-version: " + e.getMessage());
        }
    }

    private static Path path(ParsedArgs flags, Flag flag) {
        String value = flags.value(flag.name());
        return value == null ? null : Path.of(value);
    }

    private static int port(ParsedArgs flags, Flag flag) {
        String s = flags.value(flag.name());
        if (s == null) {
            return 0;
        }
        try {
            int p = Integer.parseInt(s);
            if (p < 0 || p > 65535) {
                throw new NumberFormatException();
            }
            return p;
        } catch (NumberFormatException e) {
            throw new UsageException(flag.name() + " " + UserText.quote(s) + " is not a port number (0-65535)");
        }
    }

    static final class UsageException extends RuntimeException {
        UsageException(String message) {
            super(message);
        }
    }
}
