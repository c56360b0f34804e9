package dev.drover.cli.kube;

import dev.drover.common.UserText;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The connection a kubeconfig's context describes, read as kubectl reads it ({@link KubeconfigFiles} finds and
 * merges the files): the context ({@code --context}, else {@code current-context}), its cluster, user and
 * namespace; paths relative to the file that named them; {@code --token} replacing the user's credentials. With no
 * kubeconfig at all, in a pod, its service account. What this client does not do is {@link Unsupported}.
 */
public final class Kubeconfig {

    /** What the command line says about the kubeconfig; each null when not given. */
    public record Flags(String kubeconfig, String context, String token) {}

    /** Where a pod's service account is mounted. */
    public static final Path SERVICE_ACCOUNT = Path.of("/var/run/secrets/kubernetes.io/serviceaccount");

    private static final int MAX_FILE = 1 << 20;
    private static final String EXEC_EXTENSION = "client.authentication.k8s.io/exec";
    private static final List<String> PROXY_VARIABLES =
            List.of("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy");

    private Kubeconfig() {}

    public static KubeTarget load(Flags flags, Map<String, String> env, Path home, Path serviceAccount)
            throws KubeconfigException, Unsupported {
        for (String proxy : PROXY_VARIABLES) {
            if (env.get(proxy) != null && !env.get(proxy).isBlank()) {
                throw new Unsupported("a proxy in the environment (" + proxy + ")");
            }
        }
        List<Path> files = KubeconfigFiles.locate(flags.kubeconfig(), env, home);
        if (files.isEmpty()) {
            if (env.containsKey("KUBERNETES_SERVICE_HOST")) {
                return inCluster(env, serviceAccount, flags.token());
            }
            throw new KubeconfigException("no kubeconfig: KUBECONFIG is not set and "
                    + home.resolve(".kube").resolve("config")
                    + " does not exist; set KUBECONFIG, or pass --kubeconfig FILE");
        }
        return target(KubeconfigFiles.read(files), flags);
    }

    static KubeTarget target(KubeconfigFiles.Merged config, Flags flags) throws KubeconfigException, Unsupported {
        String name = flags.context() != null ? flags.context() : config.currentContext();
        List<String> names = new ArrayList<>(config.contexts().keySet());
        String known = " (its contexts: "
                + UserText.cutEscaped(String.join(", ", names.subList(0, Math.min(names.size(), 10))), 400)
                + (names.size() > 10 ? ", ..." : "") + ")";
        if (name == null) {
            throw new KubeconfigException(
                    names.isEmpty()
                            ? "the kubeconfig defines no context; add one, or point KUBECONFIG at your cluster's"
                                    + " kubeconfig"
                            : "the kubeconfig has no current-context; pass --context NAME" + known);
        }
        KubeconfigFiles.Entry context = config.contexts().get(name);
        if (context == null) {
            throw new KubeconfigException("the kubeconfig has no context " + UserText.cutEscaped(name, 200) + known);
        }
        String where = "the kubeconfig's context " + UserText.quote(name);
        String clusterName = Fields.string(context.fields(), "cluster", where);
        KubeconfigFiles.Entry cluster =
                clusterName == null ? null : config.clusters().get(clusterName);
        if (cluster == null) {
            throw new KubeconfigException(
                    where + " names cluster " + UserText.quote(clusterName) + ", which the kubeconfig does not define");
        }
        String userName = Fields.string(context.fields(), "user", where);
        KubeconfigFiles.Entry user =
                userName == null || userName.isEmpty() ? null : config.users().get(userName);
        if (user == null && userName != null && !userName.isEmpty()) {
            throw new KubeconfigException(
                    where + " names user " + UserText.quote(userName) + ", which the kubeconfig does not define");
        }
        String namespace = Fields.string(context.fields(), "namespace", where);
        return withUser(
                clusterPart(cluster, name, namespace == null || namespace.isEmpty() ? null : namespace),
                cluster,
                user,
                flags.token());
    }

    /** The cluster's side: server and TLS, no credentials yet. */
    private static KubeTarget clusterPart(KubeconfigFiles.Entry cluster, String context, String namespace)
            throws KubeconfigException, Unsupported {
        Map<?, ?> c = cluster.fields();
        String where = "the kubeconfig's cluster " + UserText.quote(cluster.name());
        if (c.get("proxy-url") != null) {
            throw new Unsupported("proxy-url");
        }
        String server = Fields.string(c, "server", where);
        if (server == null || server.isEmpty()) {
            throw new KubeconfigException(where + " has no server");
        }
        URI uri = server(server, where);
        byte[] ca = Fields.base64(c, "certificate-authority-data", where);
        if (ca == null) {
            ca = file(cluster, Fields.string(c, "certificate-authority", where), "certificate-authority", where);
        }
        boolean insecure = Fields.bool(c, "insecure-skip-tls-verify", where);
        if (insecure && ca != null) { // as client-go, which refuses to mix them
            throw new KubeconfigException(where + " has both insecure-skip-tls-verify: true and a"
                    + " certificate-authority; remove one of them (kubectl refuses the two together too)");
        }
        String serverName = Fields.string(c, "tls-server-name", where);
        return new KubeTarget(
                uri,
                context,
                namespace,
                ca,
                insecure,
                serverName == null || serverName.isEmpty() ? null : serverName,
                null,
                null,
                null,
                null,
                null,
                null,
                null,
                null);
    }

    /**
     * A cluster's {@code server}: an http(s) URL with a host, and nothing the client would not use but messages would
     * show (a user and password, which the JDK does not send, in every {@code -v} line and error; a query or a
     * fragment, which client-go drops). A server with an '@' in it is never echoed.
     */
    private static URI server(String server, String where) throws KubeconfigException {
        String shown = server.contains("@") ? "" : ": " + UserText.quote(server);
        URI uri;
        try {
            uri = new URI(server);
        } catch (URISyntaxException e) {
            throw new KubeconfigException(where + " has a server that is not a URL" + shown);
        }
        if (uri.getRawUserInfo() != null) {
            throw new KubeconfigException(where + " has a server with a user name (and perhaps a password) before"
                    + " its host (user@host); remove it, and give credentials in the kubeconfig's user");
        }
        if (!"https".equals(uri.getScheme()) && !"http".equals(uri.getScheme()) || uri.getHost() == null) {
            throw new KubeconfigException(where + " has a server that is not an http(s) URL with a host" + shown);
        }
        if (uri.getRawQuery() != null || uri.getRawFragment() != null) {
            throw new KubeconfigException(where + " has a server with a query or a fragment (?... or #...), which"
                    + " kubectl does not use" + shown + "; remove it");
        }
        return uri;
    }

    /** {@code target} with the user's credentials, or only {@code token} when --token gave one. */
    private static KubeTarget withUser(
            KubeTarget t, KubeconfigFiles.Entry cluster, KubeconfigFiles.Entry user, String token)
            throws KubeconfigException, Unsupported {
        if (token != null) {
            return credentials(t, null, null, token, "--token", null, null, null, null);
        }
        if (user == null) {
            return t;
        }
        Map<?, ?> u = user.fields();
        String where = "the kubeconfig's user " + UserText.quote(user.name());
        for (String unsupported : List.of("auth-provider", "as", "as-uid", "as-groups", "as-user-extra")) {
            if (u.get(unsupported) != null) {
                throw new Unsupported(unsupported);
            }
        }
        byte[] cert = Fields.base64(u, "client-certificate-data", where);
        if (cert == null) {
            cert = file(user, Fields.string(u, "client-certificate", where), "client-certificate", where);
        }
        byte[] key = Fields.base64(u, "client-key-data", where);
        if (key == null) {
            key = file(user, Fields.string(u, "client-key", where), "client-key", where);
        }
        if ((cert == null) != (key == null)) {
            throw new KubeconfigException(
                    where + " has a client " + (cert == null ? "key but no certificate" : "certificate but no key"));
        }
        String bearer = Fields.string(u, "token", where);
        String bearerSource = where + " token";
        // as client-go: a tokenFile's content wins over the token beside it
        String tokenPath = Fields.string(u, "tokenFile", where);
        byte[] tokenFile = file(user, tokenPath, "tokenFile", where);
        if (tokenFile != null) {
            bearer = new String(tokenFile, StandardCharsets.UTF_8).strip();
            bearerSource = "the tokenFile "
                    + UserText.cutEscaped(user.dir().resolve(tokenPath).toString(), 300);
        }
        String username = Fields.string(u, "username", where);
        String password = Fields.string(u, "password", where);
        Map<?, ?> exec = Fields.map(u, "exec", where);
        return credentials(
                t,
                cert,
                key,
                bearer == null || bearer.isEmpty() ? null : bearer,
                bearerSource,
                username == null || username.isEmpty() ? null : username,
                password,
                where,
                exec == null ? null : exec(exec, user, t, execExtension(cluster), where + "'s exec"));
    }

    private static KubeTarget credentials(
            KubeTarget t,
            byte[] cert,
            byte[] key,
            String token,
            String tokenSource,
            String username,
            String password,
            String userSource,
            ExecConfig exec) {
        return new KubeTarget(
                t.server(),
                t.context(),
                t.namespace(),
                t.caPem(),
                t.insecure(),
                t.tlsServerName(),
                cert,
                key,
                token,
                username,
                password,
                exec,
                token == null ? null : tokenSource,
                userSource);
    }

    /**
     * The cluster's {@code extensions} entry named {@code client.authentication.k8s.io/exec}: what client-go hands
     * an exec plugin as {@code spec.cluster.config}; null when there is none.
     */
    private static Object execExtension(KubeconfigFiles.Entry cluster) throws KubeconfigException {
        String where = "the kubeconfig's cluster " + UserText.quote(cluster.name());
        for (Object x : Fields.list(cluster.fields(), "extensions", where)) {
            if (x instanceof Map<?, ?> named && EXEC_EXTENSION.equals(named.get("name"))) {
                return named.get("extension");
            }
        }
        return null;
    }

    private static ExecConfig exec(
            Map<?, ?> e, KubeconfigFiles.Entry user, KubeTarget cluster, Object extension, String where)
            throws KubeconfigException, Unsupported {
        String apiVersion = Fields.string(e, "apiVersion", where);
        if (!ExecPlugin.V1.equals(apiVersion) && !ExecPlugin.V1BETA1.equals(apiVersion)) {
            throw new Unsupported("exec apiVersion " + UserText.quote(apiVersion));
        }
        if ("Always".equals(Fields.string(e, "interactiveMode", where))) {
            throw new Unsupported("an exec plugin that needs a terminal (interactiveMode: Always)");
        }
        String command = Fields.string(e, "command", where);
        if (command == null || command.isEmpty()) {
            throw new KubeconfigException(where + " has no command");
        }
        if (command.contains("/") && !Path.of(command).isAbsolute()) {
            command = user.dir().resolve(command).toString();
        }
        List<String> args = new ArrayList<>();
        for (Object a : Fields.list(e, "args", where)) {
            if (a instanceof Map<?, ?> || a instanceof List<?> || a == null) {
                throw new KubeconfigException(where + ": args must be strings");
            }
            args.add(a.toString());
        }
        Map<String, String> env = new LinkedHashMap<>();
        for (Object v : Fields.list(e, "env", where)) {
            if (!(v instanceof Map<?, ?> pair) || Fields.string(pair, "name", where) == null) {
                throw new KubeconfigException(where + ": env must be a list of name and value");
            }
            String name = Fields.string(pair, "name", where);
            String value = Fields.string(pair, "value", where);
            if (name.isEmpty()
                    || name.indexOf('=') >= 0
                    || name.indexOf('\0') >= 0
                    || value != null && value.indexOf('\0') >= 0) {
                throw new KubeconfigException(where + ": env " + UserText.quote(name)
                        + " is not a variable a program can be given (an empty name, '=' in its name or a NUL)");
            }
            env.put(name, value == null ? "" : value);
        }
        Map<String, Object> clusterInfo = null;
        if (Fields.bool(e, "provideClusterInfo", where)) {
            clusterInfo = new LinkedHashMap<>();
            clusterInfo.put("server", cluster.server().toString());
            if (cluster.tlsServerName() != null) {
                clusterInfo.put("tls-server-name", cluster.tlsServerName());
            }
            if (cluster.caPem() != null) {
                clusterInfo.put(
                        "certificate-authority-data", Base64.getEncoder().encodeToString(cluster.caPem()));
            }
            clusterInfo.put("insecure-skip-tls-verify", cluster.insecure());
            if (extension != null) {
                clusterInfo.put("config", extension);
            }
        }
        String hint = Fields.string(e, "installHint", where);
        return new ExecConfig(apiVersion, command, List.copyOf(args), env, hint, clusterInfo);
    }

    /** A file a kubeconfig field names, relative to the kubeconfig's directory; null when the field is absent. */
    private static byte[] file(KubeconfigFiles.Entry entry, String path, String field, String where)
            throws KubeconfigException {
        if (path == null || path.isEmpty()) {
            return null;
        }
        return read(entry.dir().resolve(path), where + "'s " + field);
    }

    static byte[] read(Path file, String what) throws KubeconfigException {
        if (Files.exists(file) && !Files.isRegularFile(file)) { // a FIFO or a terminal would wait for ever
            throw new KubeconfigException(
                    "cannot read " + what + " " + UserText.cutEscaped(file.toString(), 300) + ": not a regular file");
        }
        try (InputStream in = Files.newInputStream(file)) {
            byte[] bytes = in.readNBytes(MAX_FILE + 1);
            if (bytes.length > MAX_FILE) {
                throw new KubeconfigException("cannot read " + what + " " + UserText.cutEscaped(file.toString(), 300)
                        + ": larger than 1 MiB");
            }
            return bytes;
        } catch (IOException e) {
            throw new KubeconfigException("cannot read " + what + " " + UserText.cutEscaped(file.toString(), 300)
                    + ": no such file, or not readable");
        }
    }

    /** A pod's own service account: the API server from the environment, its CA, token and namespace. */
    static KubeTarget inCluster(Map<String, String> env, Path account, String token) throws KubeconfigException {
        String host = env.get("KUBERNETES_SERVICE_HOST");
        String port = env.getOrDefault("KUBERNETES_SERVICE_PORT", "443");
        URI server;
        try {
            server = new URI("https://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + port);
        } catch (URISyntaxException e) {
            throw new KubeconfigException("KUBERNETES_SERVICE_HOST and _PORT do not make a URL: " + UserText.quote(host)
                    + ", " + UserText.quote(port));
        }
        String where = "the pod's service account";
        byte[] ca = read(account.resolve("ca.crt"), where + "'s CA");
        String bearer = token != null
                ? token
                : new String(read(account.resolve("token"), where + "'s token"), StandardCharsets.UTF_8).strip();
        String bearerSource = token != null ? "--token" : where + "'s token " + account.resolve("token");
        String namespace = Files.isReadable(account.resolve("namespace"))
                ? new String(read(account.resolve("namespace"), where + "'s namespace"), StandardCharsets.UTF_8).strip()
                : null;
        return new KubeTarget(
                server, null, namespace, ca, false, null, null, null, bearer, null, null, null, bearerSource, null);
    }
}
