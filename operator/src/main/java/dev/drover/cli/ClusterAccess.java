package dev.drover.cli;

import dev.drover.cli.kube.KubeClient;
import dev.drover.cli.kube.KubeTarget;
import dev.drover.cli.kube.Kubeconfig;
import dev.drover.cli.kube.KubeconfigException;
import dev.drover.cli.kube.Unsupported;
import dev.drover.web.OwnedHttpClients;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * How a command reaches the API server with the kubeconfig's credentials, as kubectl would: the plugin's own small
 * client ({@link DirectCalls}), or fabric8's ({@link Fabric8Calls}) where the kubeconfig asks for what only that one
 * does; and the namespace the command is for (--namespace, else the context's, else {@code default}).
 */
final class ClusterAccess {

    private ClusterAccess() {}

    /** A call on the cluster: the calls to make it with, and the namespace the command is for. */
    interface OnCluster<T> {
        T call(ClusterCalls calls, String namespace) throws CommandFailure;
    }

    /**
     * Runs {@code call} on the plugin's own client, or on fabric8's where the kubeconfig asks for what only that one
     * does; {@code timeout}: how long each answer of the API server may take.
     */
    static <T> T onCluster(PluginCommand command, java.time.Duration timeout, PrintStream err, OnCluster<T> call)
            throws CommandFailure {
        KubeTarget target = target(command);
        if (target == null) {
            return onFabric8(command, call);
        }
        KubeClient client;
        try {
            // an exec plugin's stderr (a login prompt) reaches the user as kubectl lets it, escaped
            client = KubeClient.open(target, line -> {
                err.println(TerminalText.escaped(line));
                err.flush();
            });
        } catch (KubeconfigException e) {
            throw new CommandFailure(e.getMessage());
        }
        try (client) {
            return call.call(new DirectCalls(client, timeout), namespace(command, target.namespace()));
        } catch (CommandFailure e) {
            throw withheld(e, client);
        }
    }

    /**
     * A 401 or 403 from an http server the kubeconfig has credentials for: said to be because none were sent, which
     * is what a user must change (the https address), not the credentials.
     */
    private static CommandFailure withheld(CommandFailure e, KubeClient client) {
        if (!client.credentialsWithheld() || e.httpCode() != 401 && e.httpCode() != 403) {
            return e;
        }
        return new CommandFailure("the API server at " + client.target().serverText() + " refused a call without"
                + " credentials, and none were sent because it is plain http (kubectl sends none over http either);"
                + " use its https address: " + e.getMessage());
    }

    /** --namespace, else the kubeconfig context's, else {@code default}. */
    static String namespace(PluginCommand c, String contexts) {
        return c.namespace() != null ? c.namespace() : contexts != null ? contexts : "default";
    }

    /**
     * What the plugin's own client needs to reach the API server, read from the kubeconfig as kubectl reads it; null
     * when the kubeconfig asks for what only fabric8's client does (an auth-provider, a proxy...).
     */
    private static KubeTarget target(PluginCommand c) throws CommandFailure {
        try {
            return Kubeconfig.load(
                    new Kubeconfig.Flags(c.kubeconfig(), c.context(), c.token()),
                    System.getenv(),
                    Path.of(System.getProperty("user.home")),
                    Kubeconfig.SERVICE_ACCOUNT);
        } catch (Unsupported e) {
            org.slf4j.LoggerFactory.getLogger(ClusterAccess.class)
                    .info(
                            "the kubeconfig asks for {}: the fabric8 client reads it",
                            TerminalText.clean(e.getMessage()));
            return null;
        } catch (KubeconfigException e) {
            throw new CommandFailure(e.getMessage());
        }
    }

    /** The call on fabric8's client, which reads what the plugin's own does not support. */
    private static <T> T onFabric8(PluginCommand command, OnCluster<T> call) throws CommandFailure {
        Config config = config(command);
        OwnedHttpClients http = new OwnedHttpClients();
        try (KubernetesClient client = new KubernetesClientBuilder()
                .withConfig(config)
                .withHttpClientFactory(http)
                .build()) {
            return call.call(new Fabric8Calls(client), namespace(command, config.getNamespace()));
        } finally {
            http.shutdown();
        }
    }

    /**
     * The kubeconfig (KUBECONFIG or ~/.kube/config unless --kubeconfig), at --context or its current one; with
     * --token, that token replaces the user's credentials; to an http server, none goes.
     */
    static Config config(PluginCommand c) throws CommandFailure {
        Config config = kubeconfig(c);
        if (c.token() != null) {
            config.setOauthToken(c.token());
            config.setAutoOAuthToken(null);
            config.setOauthTokenProvider(null);
            config.setAuthProvider(null);
            config.setClientCertData(null);
            config.setClientCertFile(null);
            config.setClientKeyData(null);
            config.setClientKeyFile(null);
            config.setUsername(null);
            config.setPassword(null);
        }
        return Kubeconfigs.withoutCredentialsOverHttp(config);
    }

    private static Config kubeconfig(PluginCommand c) throws CommandFailure {
        if (c.kubeconfig() == null) {
            String missing = Kubeconfigs.missing(System.getenv(), Path.of(System.getProperty("user.home")));
            if (missing != null) {
                throw new CommandFailure(missing);
            }
            return Kubeconfigs.checkContext(Config.autoConfigure(c.context()), c.context());
        }
        Path file = Path.of(c.kubeconfig());
        if (!Files.isReadable(file)) {
            throw new CommandFailure(
                    "cannot read the kubeconfig " + c.kubeconfig() + ": no such file, or not readable");
        }
        try {
            return Kubeconfigs.checkContext(Config.fromKubeconfig(c.context(), file.toFile()), c.context());
        } catch (RuntimeException e) {
            throw new CommandFailure("cannot read the kubeconfig " + c.kubeconfig() + ": " + e.getMessage());
        }
    }
}
