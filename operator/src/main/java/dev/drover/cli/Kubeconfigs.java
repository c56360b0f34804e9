package dev.drover.cli;

import io.fabric8.kubernetes.api.model.NamedContext;
import io.fabric8.kubernetes.client.Config;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/** Where the plugin's kubeconfig is, and the faults of it that the client would otherwise pass over in silence. */
final class Kubeconfigs {

    private Kubeconfigs() {}

    /**
     * Why no kubeconfig will be found, in one sentence with what to do; null when there is one (KUBECONFIG names a
     * file that exists, or ~/.kube/config exists) or the plugin runs in a pod (its service account is the config).
     */
    static String missing(Map<String, String> env, Path home) {
        String list = env.get("KUBECONFIG");
        if (list != null && !list.isBlank()) {
            List<String> files = Arrays.stream(list.split(File.pathSeparator))
                    .filter(f -> !f.isBlank())
                    .toList();
            if (files.stream().anyMatch(f -> Files.isReadable(Path.of(f)))) {
                return null;
            }
            return "no kubeconfig: KUBECONFIG names no readable file (" + TerminalText.clean(list)
                    + "); point it at your cluster's kubeconfig, or pass --kubeconfig FILE";
        }
        if (Files.isReadable(home.resolve(".kube").resolve("config")) || env.containsKey("KUBERNETES_SERVICE_HOST")) {
            return null;
        }
        return "no kubeconfig: KUBECONFIG is not set and "
                + home.resolve(".kube").resolve("config")
                + " does not exist; set KUBECONFIG, or pass --kubeconfig FILE";
    }

    /** {@code config}, when {@code context} (null: the current one) is one of its contexts. */
    static Config checkContext(Config config, String context) throws CommandFailure {
        if (context == null || config.getContexts() == null) {
            return config;
        }
        List<String> names =
                config.getContexts().stream().map(NamedContext::getName).toList();
        if (!names.contains(context)) {
            throw new CommandFailure("the kubeconfig has no context " + TerminalText.clean(context) + " (its contexts: "
                    + TerminalText.clean(String.join(", ", names.subList(0, Math.min(names.size(), 10))))
                    + (names.size() > 10 ? ", ..." : "") + ")");
        }
        return config;
    }

    /**
     * {@code config} as fabric8's client may use it: for an {@code http://} server, a config with its server,
     * namespace and impersonation only, so that no token, password or client certificate goes out in clear, as
     * kubectl sends none (and none is re-read from the kubeconfig when the server answers 401: the new config has no
     * file). An exec plugin fabric8 ran while reading the kubeconfig has run, but what it gave is not sent.
     */
    static Config withoutCredentialsOverHttp(Config config) {
        String server = config.getMasterUrl();
        if (server == null || !server.regionMatches(true, 0, "http://", 0, 7)) {
            return config;
        }
        Config bare = Config.empty();
        bare.setMasterUrl(server);
        bare.setNamespace(config.getNamespace());
        bare.setImpersonateUsername(config.getImpersonateUsername());
        bare.setImpersonateGroups(config.getImpersonateGroups());
        bare.setImpersonateExtras(config.getImpersonateExtras());
        bare.setConnectionTimeout(config.getConnectionTimeout());
        bare.setRequestTimeout(config.getRequestTimeout());
        return bare;
    }
}
