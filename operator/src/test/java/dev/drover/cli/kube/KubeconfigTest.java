package dev.drover.cli.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The kubeconfig read as kubectl reads it: which files, which context, what each user's credentials become. */
class KubeconfigTest {

    @TempDir
    Path dir;

    static final Kubeconfig.Flags NONE = new Kubeconfig.Flags(null, null, null);

    Path write(String name, String text) throws Exception {
        Path file = dir.resolve(name);
        Files.createDirectories(file.getParent());
        Files.writeString(file, text);
        return file;
    }

    KubeTarget load(Kubeconfig.Flags flags, Map<String, String> env) throws Exception {
        return Kubeconfig.load(flags, env, dir.resolve("home"), dir.resolve("sa"));
    }

    KubeTarget file(String kubeconfig) throws Exception {
        return load(new Kubeconfig.Flags(write("kc", kubeconfig).toString(), null, null), Map.of());
    }

    static String b64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void kubeconfigFilesMergeFirstWinsAsKubectlDoes() throws Exception {
        Path a = write("a/config", """
                clusters: [{name: shared, cluster: {server: "https://first:6443"}}]
                users: [{name: u, user: {token: from-a}}]
                contexts: [{name: one, context: {cluster: shared, user: u, namespace: team-a}}]
                """);
        Path b = write("b/config", """
                clusters: [{name: shared, cluster: {server: "https://second:6443"}},
                           {name: other, cluster: {server: "https://other:6443"}}]
                users: [{name: u, user: {token: from-b}}]
                contexts: [{name: one, context: {cluster: other, user: u}},
                           {name: two, context: {cluster: other, user: u}}]
                current-context: two
                """);
        Path c = write("c/config", "current-context: one\n");
        Map<String, String> env = Map.of("KUBECONFIG", "/nowhere:" + a + ":" + b + ":" + c);
        KubeTarget t = load(NONE, env);
        assertThat(t.context()).as("the first current-context set").isEqualTo("two");
        assertThat(t.server().toString()).isEqualTo("https://other:6443");
        assertThat(t.token()).as("user u from the first file naming it").isEqualTo("from-a");
        assertThat(t.namespace()).isNull();
        KubeTarget one = load(new Kubeconfig.Flags(null, "one", null), env);
        assertThat(one.server().toString())
                .as("context one and cluster shared from a")
                .isEqualTo("https://first:6443");
        assertThat(one.namespace()).isEqualTo("team-a");
    }

    @Test
    void withoutKubeconfigVariableHomesConfigIsRead() throws Exception {
        write("home/.kube/config", """
                clusters: [{name: c, cluster: {server: "https://home:6443"}}]
                contexts: [{name: x, context: {cluster: c}}]
                current-context: x
                """);
        KubeTarget t = load(NONE, Map.of());
        assertThat(t.server().toString()).isEqualTo("https://home:6443");
        assertThat(t.token()).as("a context without a user is anonymous").isNull();
    }

    @Test
    void relativePathsResolveAgainstTheFileThatNamesThem() throws Exception {
        write("certs/ca.crt", "CA");
        write("certs/client.crt", "CERT");
        write("certs/client.key", "KEY");
        write("certs/token", "file-token\n");
        Path kc = write("conf/kubeconfig", """
                clusters: [{name: c, cluster: {server: "https://h:6443", certificate-authority: ../certs/ca.crt}}]
                users: [{name: u, user: {client-certificate: ../certs/client.crt, client-key: ../certs/client.key,
                                         tokenFile: ../certs/token, token: inline}}]
                contexts: [{name: x, context: {cluster: c, user: u}}]
                current-context: x
                """);
        KubeTarget t = load(new Kubeconfig.Flags(kc.toString(), null, null), Map.of());
        assertThat(new String(t.caPem())).isEqualTo("CA");
        assertThat(new String(t.clientCertPem())).isEqualTo("CERT");
        assertThat(new String(t.clientKeyPem())).isEqualTo("KEY");
        assertThat(t.token())
                .as("tokenFile wins over token, as client-go has it")
                .isEqualTo("file-token");
    }

    @Test
    void eachKindOfCredentialIsRead() throws Exception {
        KubeTarget data = file("""
                clusters: [{name: c, cluster: {server: "https://h", certificate-authority-data: %s,
                                               tls-server-name: api.example, insecure-skip-tls-verify: false}}]
                users: [{name: u, user: {client-certificate-data: %s, client-key-data: %s}}]
                contexts: [{name: x, context: {cluster: c, user: u}}]
                current-context: x
                """.formatted(b64("CA"), b64("CERT"), b64("KEY")));
        assertThat(new String(data.caPem())).isEqualTo("CA");
        assertThat(data.tlsServerName()).isEqualTo("api.example");
        assertThat(new String(data.clientCertPem())).isEqualTo("CERT");
        assertThat(data.serverText()).isEqualTo("https://h/");

        KubeTarget basic = file("""
                clusters: [{name: c, cluster: {server: "http://h:8080", insecure-skip-tls-verify: true}}]
                users: [{name: u, user: {username: bob, password: "s3cret"}}]
                contexts: [{name: x, context: {cluster: c, user: u}}]
                current-context: x
                """);
        assertThat(basic.insecure()).isTrue();
        assertThat(basic.username()).isEqualTo("bob");
        assertThat(basic.password()).isEqualTo("s3cret");

        write("bin/plugin", "");
        KubeTarget exec = file("""
                clusters: [{name: c, cluster: {server: "https://h", extensions: [{name: other, extension: 1},
                           {name: client.authentication.k8s.io/exec, extension: {audience: k8s, scopes: [a, b]}}]}}]
                users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: ./bin/plugin,
                                               args: [get-token, 7], env: [{name: A, value: b}],
                                               interactiveMode: IfAvailable, provideClusterInfo: true}}}]
                contexts: [{name: x, context: {cluster: c, user: u}}]
                current-context: x
                """);
        assertThat(exec.exec().command()).isEqualTo(dir.resolve("./bin/plugin").toString());
        assertThat(exec.exec().args()).containsExactly("get-token", "7");
        assertThat(exec.exec().env()).containsEntry("A", "b");
        assertThat(exec.exec().clusterInfo()).containsEntry("server", "https://h");
        assertThat(exec.exec().clusterInfo())
                .as("as client-go: the cluster's exec extension is the plugin's spec.cluster.config")
                .containsEntry("config", Map.of("audience", "k8s", "scopes", List.of("a", "b")));
    }

    @Test
    void tokenFlagReplacesTheUsersCredentials() throws Exception {
        write("kc", """
                clusters: [{name: c, cluster: {server: "https://h"}}]
                users: [{name: u, user: {client-certificate-data: %s, client-key-data: %s, username: a, password: b,
                                         auth-provider: {name: oidc}}}]
                contexts: [{name: x, context: {cluster: c, user: u}}]
                current-context: x
                """.formatted(b64("CERT"), b64("KEY")));
        KubeTarget t = load(new Kubeconfig.Flags(dir.resolve("kc").toString(), null, "flag-token"), Map.of());
        assertThat(t.token()).isEqualTo("flag-token");
        assertThat(t.clientCertPem()).isNull();
        assertThat(t.username()).isNull();
    }

    @Test
    void whatOnlyFabric8sClientDoesIsUnsupported() throws Exception {
        String user = """
                clusters: [{name: c, cluster: {server: "https://h"%s}}]
                users: [{name: u, user: %s}]
                contexts: [{name: x, context: {cluster: c, user: u}}]
                current-context: x
                """;
        for (String[] c : List.of(
                new String[] {"", "{auth-provider: {name: oidc}}"},
                new String[] {"", "{token: t, as: admin}"},
                new String[] {", proxy-url: \"http://proxy:3128\"", "{token: t}"},
                new String[] {"", "{exec: {apiVersion: client.authentication.k8s.io/v1alpha1, command: x}}"},
                new String[] {
                    "", "{exec: {apiVersion: client.authentication.k8s.io/v1, command: x, interactiveMode: Always}}"
                })) {
            assertThatThrownBy(() -> file(user.formatted(c[0], c[1]))).isInstanceOf(Unsupported.class);
        }
        write("ok", user.formatted("", "{token: t}"));
        assertThatThrownBy(() -> load(
                        new Kubeconfig.Flags(dir.resolve("ok").toString(), null, null),
                        Map.of("HTTPS_PROXY", "http://proxy:3128")))
                .isInstanceOf(Unsupported.class);
    }

    @Test
    void badKubeconfigsAreOneSentenceEach() throws Exception {
        String base = """
                clusters: [{name: c, cluster: {server: "https://h"}}]
                users: [{name: u, user: {token: t}}]
                contexts: [{name: x, context: {cluster: c, user: u}}, {name: y, context: {cluster: gone, user: u}},
                           {name: z, context: {cluster: c, user: nobody}}]
                """;
        assertThatThrownBy(() -> file(base))
                .hasMessage("the kubeconfig has no current-context; pass --context NAME (its contexts: x, y, z)");
        assertThatThrownBy(() -> file(base + "current-context: w\n"))
                .hasMessage("the kubeconfig has no context w (its contexts: x, y, z)");
        assertThatThrownBy(() -> file(base + "current-context: y\n"))
                .hasMessage("the kubeconfig's context \"y\" names cluster \"gone\", which the kubeconfig does not"
                        + " define");
        assertThatThrownBy(() -> file(base + "current-context: z\n"))
                .hasMessage("the kubeconfig's context \"z\" names user \"nobody\", which the kubeconfig does not"
                        + " define");
        assertThatThrownBy(() -> file("clusters: [unclosed\n"))
                .isInstanceOf(KubeconfigException.class)
                .hasMessageStartingWith("cannot read the kubeconfig " + dir.resolve("kc") + ": ");
        assertThatThrownBy(() -> file("- a list\n"))
                .hasMessageEndingWith(
                        ": not a kubeconfig (its top level is not a map of clusters, users and contexts)");
        assertThatThrownBy(() -> file("clusters: {c: 1}\n")).hasMessageEndingWith(": clusters is not a list");
        assertThatThrownBy(() -> file("""
                        clusters: [{name: c, cluster: {server: "ftp://h"}}]
                        contexts: [{name: x, context: {cluster: c}}]
                        current-context: x
                        """))
                .hasMessage("the kubeconfig's cluster \"c\" has a server that is not an http(s) URL with a host:"
                        + " \"ftp://h\"");
        assertThatThrownBy(() -> file("""
                        clusters: [{name: c, cluster: {server: "https://h", certificate-authority: missing.crt}}]
                        contexts: [{name: x, context: {cluster: c}}]
                        current-context: x
                        """))
                .hasMessage("cannot read the kubeconfig's cluster \"c\"'s certificate-authority "
                        + dir.resolve("missing.crt") + ": no such file, or not readable");
        assertThatThrownBy(() -> file("""
                        clusters: [{name: c, cluster: {server: "https://h", certificate-authority-data: "%%%%"}}]
                        contexts: [{name: x, context: {cluster: c}}]
                        current-context: x
                        """))
                .hasMessage("the kubeconfig's cluster \"c\": certificate-authority-data is not base64");
        assertThatThrownBy(() -> file("""
                        clusters: [{name: c, cluster: {server: "https://h"}}]
                        users: [{name: u, user: {client-certificate-data: %s}}]
                        contexts: [{name: x, context: {cluster: c, user: u}}]
                        current-context: x
                        """.formatted(b64("CERT"))))
                .hasMessage("the kubeconfig's user \"u\" has a client certificate but no key");
        assertThatThrownBy(() -> file("a: &a [*a]\n")).isInstanceOf(KubeconfigException.class);
        assertThatThrownBy(() -> load(NONE, Map.of()))
                .hasMessage("no kubeconfig: KUBECONFIG is not set and " + dir.resolve("home/.kube/config")
                        + " does not exist; set KUBECONFIG, or pass --kubeconfig FILE");
    }

    @Test
    void aJsonKubeconfigIndentedWithTabsIsRead() throws Exception {
        KubeTarget t =
                file("{\n\t\"clusters\": [{\"name\": \"c\", \"cluster\": {\"server\": \"https://json:6443\"}}],\n"
                        + "\t\"contexts\": [{\"name\": \"x\", \"context\": {\"cluster\": \"c\", \"namespace\": \"j\"}}],\n"
                        + "\t\"current-context\": \"x\"\n}\n");
        assertThat(t.server().toString()).isEqualTo("https://json:6443");
        assertThat(t.namespace()).isEqualTo("j");
        assertThatThrownBy(() -> file("{\"clusters\": "))
                .hasMessageContaining(": not JSON (line 1, column 14), nor YAML (");
    }

    /** kubectl reads a YAML flow mapping at the top level, which looks like JSON but is none. */
    @Test
    void aYamlFlowMappingKubeconfigIsRead() throws Exception {
        KubeTarget t = file("{apiVersion: v1, clusters: [{name: c, cluster: {server: 'https://flow:6443'}}],"
                + " contexts: [{name: x, context: {cluster: c, namespace: f}}], current-context: x}\n");
        assertThat(t.server().toString()).isEqualTo("https://flow:6443");
        assertThat(t.namespace()).isEqualTo("f");
    }

    /** What may be a credential is never quoted in an error: not as a wrongly typed value, not in a parser's text. */
    @Test
    void errorsNeverQuoteACredential() throws Exception {
        String kubeconfig = """
                clusters: [{name: c, cluster: {server: "https://h"}}]
                users: [{name: u, user: %s}]
                contexts: [{name: x, context: {cluster: c, user: u}}]
                current-context: x
                """;
        for (String user : List.of(
                "{token: [eyJsecret1]}",
                "{password: {hunter2: x}, username: bob}",
                "{client-key-data: [c2VjcmV0a2V5]}",
                "{exec: {apiVersion: client.authentication.k8s.io/v1, command: x, env: [{name: T, value: [s3cr3t]}]}}")) {
            assertThatThrownBy(() -> file(kubeconfig.formatted(user)))
                    .isInstanceOf(KubeconfigException.class)
                    .hasMessageMatching(".* must be a string, not a (list|map)")
                    .hasMessageNotContainingAny("eyJsecret1", "hunter2", "c2VjcmV0a2V5", "s3cr3t");
        }
        assertThatThrownBy(
                        () -> file("{\"users\": [{\"name\": \"u\", \"user\": {\"token\": eyJhbGciOiJSUzI1NiJ9.secret"))
                .isInstanceOf(KubeconfigException.class)
                .hasMessageNotContaining("eyJhbGciOiJSUzI1NiJ9");
    }

    @Test
    void aServerWithAUserQueryOrFragmentIsRefusedWithoutShowingThem() throws Exception {
        String kubeconfig = """
                clusters: [{name: c, cluster: {server: "%s"}}]
                contexts: [{name: x, context: {cluster: c}}]
                current-context: x
                """;
        assertThatThrownBy(() -> file(kubeconfig.formatted("https://admin:hunter2@h:6443")))
                .hasMessageStartingWith("the kubeconfig's cluster \"c\" has a server with a user name")
                .hasMessageNotContaining("hunter2");
        assertThatThrownBy(() -> file(kubeconfig.formatted("https://admin:hunter2@h:6443/%zz")))
                .hasMessage("the kubeconfig's cluster \"c\" has a server that is not a URL");
        assertThatThrownBy(() -> file(kubeconfig.formatted("https://h:6443/?token=x")))
                .hasMessageContaining("has a server with a query or a fragment");
        assertThatThrownBy(() -> file(kubeconfig.formatted("https://h:6443/#frag")))
                .hasMessageContaining("has a server with a query or a fragment");
    }

    /** As client-go: a CA to check the server against and no check at all cannot both be meant. */
    @Test
    void insecureWithACertificateAuthorityIsRefused() throws Exception {
        assertThatThrownBy(() -> file("""
                        clusters: [{name: c, cluster: {server: "https://h", insecure-skip-tls-verify: true,
                                                       certificate-authority-data: %s}}]
                        contexts: [{name: x, context: {cluster: c}}]
                        current-context: x
                        """.formatted(b64("CA"))))
                .hasMessageStartingWith("the kubeconfig's cluster \"c\" has both insecure-skip-tls-verify: true and a"
                        + " certificate-authority");
    }

    /** A FIFO or a directory where a file should be: refused at once, not waited on for ever. */
    @Test
    void whatIsNotARegularFileIsRefused() throws Exception {
        Path fifo = dir.resolve("fifo");
        Process mkfifo = new ProcessBuilder("mkfifo", fifo.toString()).start();
        assertThat(mkfifo.waitFor()).isZero();
        Files.createDirectories(dir.resolve("adir"));
        String kubeconfig = """
                clusters: [{name: c, cluster: {server: "https://h", %s}}]
                users: [{name: u, user: {%s}}]
                contexts: [{name: x, context: {cluster: c, user: u}}]
                current-context: x
                """;
        assertTimeoutPreemptively(java.time.Duration.ofSeconds(5), () -> {
            assertThatThrownBy(() -> file(kubeconfig.formatted("certificate-authority: fifo", "token: t")))
                    .hasMessage("cannot read the kubeconfig's cluster \"c\"'s certificate-authority " + fifo
                            + ": not a regular file");
            assertThatThrownBy(() -> file(kubeconfig.formatted("tls-server-name: a", "tokenFile: adir")))
                    .hasMessageEndingWith("tokenFile " + dir.resolve("adir") + ": not a regular file");
            assertThatThrownBy(() -> load(new Kubeconfig.Flags(fifo.toString(), null, null), Map.of()))
                    .hasMessage("cannot read the kubeconfig " + fifo + ": not a regular file");
        });
    }

    @Test
    void anExecEnvAProgramCannotBeGivenIsRefused() throws Exception {
        assertThatThrownBy(() -> file("""
                        clusters: [{name: c, cluster: {server: "https://h"}}]
                        users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: x,
                                                        env: [{name: "A=B", value: c}]}}}]
                        contexts: [{name: x, context: {cluster: c, user: u}}]
                        current-context: x
                        """))
                .hasMessageStartingWith("the kubeconfig's user \"u\"'s exec: env \"A=B\" is not a variable");
    }

    @Test
    void eachTokenKnowsWhereItCameFrom() throws Exception {
        write("tok", "from-file\n");
        String kubeconfig = """
                clusters: [{name: c, cluster: {server: "https://h"}}]
                users: [{name: u, user: {%s}}]
                contexts: [{name: x, context: {cluster: c, user: u}}]
                current-context: x
                """;
        assertThat(file(kubeconfig.formatted("token: t")).tokenSource()).isEqualTo("the kubeconfig's user \"u\" token");
        assertThat(file(kubeconfig.formatted("token: t, tokenFile: tok")).tokenSource())
                .isEqualTo("the tokenFile " + dir.resolve("tok"));
        assertThat(load(new Kubeconfig.Flags(dir.resolve("kc").toString(), null, "x"), Map.of())
                        .tokenSource())
                .isEqualTo("--token");
    }

    @Test
    void aHugeFileIsNotRead() throws Exception {
        Path big = dir.resolve("big");
        Files.write(big, new byte[KubeconfigFiles.MAX_BYTES + 1]);
        assertThatThrownBy(() -> load(new Kubeconfig.Flags(big.toString(), null, null), Map.of()))
                .hasMessageEndingWith("larger than 4 MiB, which no kubeconfig is");
    }

    @Test
    void inAPodItsServiceAccountIsTheConfig() throws Exception {
        write("sa/ca.crt", "CA");
        write("sa/token", "sa-token\n");
        write("sa/namespace", "team-b");
        KubeTarget t = load(NONE, Map.of("KUBERNETES_SERVICE_HOST", "10.96.0.1", "KUBERNETES_SERVICE_PORT", "443"));
        assertThat(t.server().toString()).isEqualTo("https://10.96.0.1:443");
        assertThat(t.token()).isEqualTo("sa-token");
        assertThat(t.namespace()).isEqualTo("team-b");
        assertThat(new String(t.caPem())).isEqualTo("CA");
    }
}
