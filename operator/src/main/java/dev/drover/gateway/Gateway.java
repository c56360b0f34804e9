package dev.drover.gateway;

import dev.drover.httpapi.KubernetesAuth;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.time.Clock;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code java -jar drover-agent.jar gateway}: the Drover gateway, which serves the aggregated API {@code
 * agent.drover.dev} ({@link GatewayApi}) so that users reach their tasks' logs and usage through the Kubernetes API
 * server, with their own credentials and RBAC, while only the gateway's own token ever reaches a node.
 */
public final class Gateway implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(Gateway.class);

    static final String USAGE = """
            usage: java -jar drover-agent.jar gateway [FLAG]...

            Serves the aggregated API agent.drover.dev/v1alpha1 (allocations/NAME/{log,stats,snapshot}) behind the
            Kubernetes API server (APIService v1alpha1.agent.drover.dev) until SIGTERM. Flags take --flag VALUE or
            --flag=VALUE:
              --port N                HTTPS port (8443)
              --health-port N         HTTPS port of /healthz, /livez and /readyz alone, which a flood of
                                      connections to --port cannot use up (8444; 0: a free one, -1: none)
              --tls-cert-file FILE    serving certificate, PEM (/etc/drover/gateway-tls/tls.crt)
              --tls-key-file FILE     its key, PEM (/etc/drover/gateway-tls/tls.key)
              --tls-client-cert-file FILE
                                      the client certificate shown to agents with the token, PEM
                                      (/etc/drover/gateway-tls/client.crt)
              --tls-client-key-file FILE
                                      its key, PEM (/etc/drover/gateway-tls/client.key)
              --kubeconfig FILE       how to reach the API server (default: in-cluster)
              --peer-token-file FILE  the gateway's own token of audience drover.dev/agent, shown to agents
                                      (/var/run/secrets/drover.dev/peer/token)
              --log-level LEVEL       error, warn, info (default), debug, trace
            """;
    static final int EXIT_USAGE = 2;
    static final int EXIT_FAILED = 1;

    /** The command line, read. */
    record Options(
            int port,
            int healthPort,
            Path certFile,
            Path keyFile,
            Path clientCertFile,
            Path clientKeyFile,
            String kubeconfig,
            Path peerTokenFile,
            String logLevel) {

        static Options parse(String[] args) {
            int port = 8443;
            int healthPort = 8444;
            Path cert = Path.of("/etc/drover/gateway-tls/tls.crt");
            Path key = Path.of("/etc/drover/gateway-tls/tls.key");
            Path clientCert = Path.of("/etc/drover/gateway-tls/client.crt");
            Path clientKey = Path.of("/etc/drover/gateway-tls/client.key");
            String kubeconfig = null;
            Path token = Path.of("/var/run/secrets/drover.dev/peer/token");
            String level = "info";
            for (int i = 0; i < args.length; i++) {
                String flag = args[i];
                String value;
                int eq = flag.indexOf('=');
                if (flag.startsWith("--") && eq > 0) {
                    value = flag.substring(eq + 1);
                    flag = flag.substring(0, eq);
                } else if (i + 1 < args.length) {
                    value = args[++i];
                } else {
                    throw new IllegalArgumentException(flag + " needs a value");
                }
                switch (flag) {
                    case "--port" -> port = port("--port", value);
                    case "--health-port" -> healthPort = value.equals("-1") ? -1 : port("--health-port", value);
                    case "--tls-cert-file" -> cert = Path.of(value);
                    case "--tls-key-file" -> key = Path.of(value);
                    case "--tls-client-cert-file" -> clientCert = Path.of(value);
                    case "--tls-client-key-file" -> clientKey = Path.of(value);
                    case "--kubeconfig" -> kubeconfig = value;
                    case "--peer-token-file" -> token = Path.of(value);
                    case "--log-level" -> level = value;
                    default -> throw new IllegalArgumentException("unknown flag \"" + GatewayStatus.cut(flag) + "\"");
                }
            }
            return new Options(port, healthPort, cert, key, clientCert, clientKey, kubeconfig, token, level);
        }

        private static int port(String flag, String value) {
            if (!value.matches("[0-9]{1,5}") || Integer.parseInt(value) > 65535) {
                throw new IllegalArgumentException(flag + ": \"" + value + "\" is not a port number");
            }
            return Integer.parseInt(value);
        }
    }

    private final GatewayApi api;

    private Gateway(GatewayApi api) {
        this.api = api;
    }

    /** The gateway's files: its serving certificate, its client certificate for agents, its token for agents. */
    public record Credentials(
            Path certFile, Path keyFile, Path clientCertFile, Path clientKeyFile, Path peerTokenFile) {}

    /**
     * Starts serving on {@code address}, and the health checks also on {@code probes} (null: not apart), with {@code
     * client} (the gateway's own identity).
     */
    public static Gateway start(
            KubernetesClient client, InetSocketAddress address, InetSocketAddress probes, Credentials files)
            throws IOException, GeneralSecurityException {
        RequestHeaderAuth authentication = RequestHeaderAuth.from(client, Clock.systemUTC());
        KubernetesAuth authorization = new KubernetesAuth(client, Clock.systemUTC());
        GatewayApi api = GatewayApi.start(
                address,
                probes,
                GatewayTls.serving(files.certFile(), files.keyFile(), authentication),
                authentication,
                authorization::authorize,
                new NodeAgents(
                        client,
                        files.peerTokenFile(),
                        GatewayTls.client(files.clientCertFile(), files.clientKeyFile())));
        return new Gateway(api);
    }

    public int port() {
        return api.port();
    }

    /** The port of the health checks apart; -1 when they have none. */
    public int probePort() {
        return api.probePort();
    }

    @Override
    public void close() {
        api.close();
    }

    /**
     * Runs the gateway until {@code untilStopped} returns; the exit code. {@code logLevel} sets the level of Drover's
     * loggers.
     */
    public static int run(
            String[] args, PrintStream out, PrintStream err, Runnable untilStopped, Consumer<String> logLevel) {
        if (args.length == 1 && (args[0].equals("--help") || args[0].equals("-h") || args[0].equals("help"))) {
            out.print(USAGE);
            return 0;
        }
        Options options;
        try {
            options = Options.parse(args);
        } catch (IllegalArgumentException e) {
            err.println("drover gateway: " + e.getMessage());
            err.print(USAGE);
            return EXIT_USAGE;
        }
        logLevel.accept(options.logLevel());
        Config config = options.kubeconfig() == null
                ? Config.autoConfigure(null)
                : Config.fromKubeconfig(null, Path.of(options.kubeconfig()).toFile());
        try (KubernetesClient client = new KubernetesClientBuilder()
                        .withConfig(config)
                        .withHttpClientFactory(new JdkHttpClientFactory())
                        .build();
                Gateway gateway = start(
                        client,
                        new InetSocketAddress(options.port()),
                        options.healthPort() < 0 ? null : new InetSocketAddress(options.healthPort()),
                        new Credentials(
                                options.certFile(),
                                options.keyFile(),
                                options.clientCertFile(),
                                options.clientKeyFile(),
                                options.peerTokenFile()))) {
            LOG.info(
                    "the Drover gateway serves agent.drover.dev on port {}, its health checks also on port {}",
                    gateway.port(),
                    gateway.probePort());
            untilStopped.run();
            LOG.info("stopping");
        } catch (IOException | GeneralSecurityException | RuntimeException e) {
            err.println("drover gateway: cannot start: " + e.getMessage());
            return EXIT_FAILED;
        }
        return 0;
    }
}
