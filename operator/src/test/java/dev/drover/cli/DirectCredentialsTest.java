package dev.drover.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Where the plugin's own client sends credentials, and how it treats them: never over plain http (as kubectl), never
 * quoted in an error, and an exec plugin's login prompt shown as it comes.
 */
class DirectCredentialsTest {

    static final String LOG = KubectlDroverTest.API + "log?task=main&stream=stdout";

    @TempDir
    Path dir;

    KubernetesMockServer server;
    final List<String> authorizations = new CopyOnWriteArrayList<>();

    @AfterEach
    void stop() {
        if (server != null) {
            server.destroy();
        }
    }

    /** A mock API server (over TLS or not) that answers the log with {@code code}, noting each Authorization. */
    String serve(boolean tls, int code, String body) {
        server = new KubernetesMockServer(tls);
        server.init(InetAddress.getLoopbackAddress(), 0);
        server.expect()
                .get()
                .withPath(LOG)
                .andReply(code, request -> {
                    authorizations.add(String.valueOf(request.getHeader("Authorization")));
                    return body;
                })
                .always();
        return (tls ? "https" : "http") + "://127.0.0.1:" + server.getPort();
    }

    Path kubeconfig(String server, String user) throws Exception {
        Path file = dir.resolve("kubeconfig");
        Files.writeString(file, """
                clusters: [{name: c, cluster: {server: "%s", insecure-skip-tls-verify: %s}}]
                users: [{name: u, user: %s}]
                contexts: [{name: x, context: {cluster: c, user: u, namespace: team-a}}]
                current-context: x
                """.formatted(server, server.startsWith("https"), user));
        return file;
    }

    Path plugin(String name, String body) throws Exception {
        Path file = dir.resolve(name);
        Files.writeString(file, "#!/bin/sh\n" + body);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwx------"));
        return file;
    }

    static String execUser(Path plugin) {
        return "{exec: {apiVersion: client.authentication.k8s.io/v1, command: " + plugin + "}}";
    }

    /** As client-go: to an http server no token, no password and no exec plugin's token go, and no plugin runs. */
    @Test
    void anHttpServerIsSentNoCredentials() throws Exception {
        String http = serve(false, 200, "hello\n");
        Path ran = dir.resolve("plugin-ran");
        Path plugin = plugin(
                "cred.sh",
                "touch " + ran + "\necho '{\"apiVersion\": \"client.authentication.k8s.io/v1\","
                        + " \"kind\": \"ExecCredential\", \"status\": {\"token\": \"exec-token\"}}'\n");
        for (String user : List.of("{token: kube-token}", "{username: bob, password: s3cret}", execUser(plugin))) {
            KubectlDroverTest.Run r = KubectlDroverTest.run(
                    "logs",
                    "web",
                    "main",
                    "--kubeconfig",
                    kubeconfig(http, user).toString());
            assertThat(r.err()).isEmpty();
            assertThat(r.out()).isEqualTo("hello\n");
        }
        KubectlDroverTest.Run flag = KubectlDroverTest.run(
                "logs",
                "web",
                "main",
                "--token",
                "flag-token",
                "--kubeconfig",
                kubeconfig(http, "{}").toString());
        assertThat(flag.out()).isEqualTo("hello\n");
        assertThat(authorizations).containsExactly("null", "null", "null", "null");
        assertThat(ran).as("the exec plugin is not run for an http server").doesNotExist();
    }

    /** What the fabric8 client reads instead (impersonation, here) goes to an http server without credentials too. */
    @Test
    void theFabric8ClientSendsNoCredentialsToAnHttpServerEither() throws Exception {
        String http = serve(false, 200, "hello\n");
        KubectlDroverTest.Run r = KubectlDroverTest.run(
                "logs",
                "web",
                "main",
                "--kubeconfig",
                kubeconfig(http, "{token: kube-token, as: admin}").toString());
        assertThat(r.err()).isEmpty();
        assertThat(r.out()).isEqualTo("hello\n");
        assertThat(authorizations).containsExactly("null");
    }

    @Test
    void aRefusalFromAnHttpServerSaysNoCredentialsWereSent() throws Exception {
        String http = serve(false, 401, """
                {"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized","code":401}""");
        KubectlDroverTest.Run r = KubectlDroverTest.run(
                "logs",
                "web",
                "main",
                "--kubeconfig",
                kubeconfig(http, "{token: t}").toString());
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.err())
                .isEqualTo("kubectl drover: the API server at " + http + "/ refused a call without credentials, and"
                        + " none were sent because it is plain http (kubectl sends none over http either); use its"
                        + " https address: Unauthorized (HTTP 401)\n");
        KubectlDroverTest.Run anonymous = KubectlDroverTest.run(
                "logs", "web", "main", "--kubeconfig", kubeconfig(http, "{}").toString());
        assertThat(anonymous.err())
                .as("without credentials in the kubeconfig, the usual sentence")
                .startsWith("kubectl drover: the API server does not accept your credentials");
    }

    /** The JDK's refusal of a header quotes it: a token with a newline once landed whole on stderr. */
    @Test
    void aTokenWithAControlCharacterIsRefusedWithoutBeingShown() throws Exception {
        String https = serve(true, 200, "hello\n");
        Files.writeString(dir.resolve("token"), "file-secret-1\nfile-secret-2\n");
        Path execPlugin = plugin(
                "cred.sh",
                "echo '{\"apiVersion\": \"client.authentication.k8s.io/v1\","
                        + " \"kind\": \"ExecCredential\", \"status\": {\"token\": \"exec-secret-1\\\\nexec-secret-2\"}}'\n");
        String[][] cases = {
            {"{token: \"yaml-secret-1\\nyaml-secret-2\"}", "the kubeconfig's user \"u\" token"},
            {"{tokenFile: token}", "the tokenFile " + dir.resolve("token")},
            {execUser(execPlugin), "the exec plugin's token"},
            {"{username: bob, password: \"pw-secret-1\\rpw-secret-2\"}", "the kubeconfig's user \"u\" password"},
        };
        for (String[] c : cases) {
            KubectlDroverTest.Run r = KubectlDroverTest.run(
                    "logs",
                    "web",
                    "main",
                    "--kubeconfig",
                    kubeconfig(https, c[0]).toString());
            assertThat(r.exit()).isEqualTo(1);
            assertThat(r.err())
                    .startsWith("kubectl drover: " + c[1] + " holds ")
                    .doesNotContain("secret");
        }
        KubectlDroverTest.Run flag = KubectlDroverTest.run(
                "logs",
                "web",
                "main",
                "--token",
                "flag-secret-1\nflag-secret-2",
                "--kubeconfig",
                kubeconfig(https, "{}").toString());
        assertThat(flag.err()).startsWith("kubectl drover: --token holds ").doesNotContain("secret");
        assertThat(authorizations).isEmpty();
    }

    @Test
    void anExecPluginsPromptReachesStderrEscaped() throws Exception {
        String https = serve(true, 200, "hello\n");
        Path execPlugin = plugin(
                "login.sh",
                "printf 'enter code QX7 at https://login.example\\033[2J\\n' >&2\n"
                        + "echo '{\"apiVersion\": \"client.authentication.k8s.io/v1\", \"kind\": \"ExecCredential\","
                        + " \"status\": {\"token\": \"exec-token\"}}'\n");
        KubectlDroverTest.Run r = KubectlDroverTest.run(
                "logs",
                "web",
                "main",
                "--kubeconfig",
                kubeconfig(https, execUser(execPlugin)).toString());
        assertThat(r.exit()).isZero();
        assertThat(r.out()).isEqualTo("hello\n");
        assertThat(r.err()).isEqualTo("enter code QX7 at https://login.example\\u001B[2J\n");
        assertThat(authorizations).containsExactly("Bearer exec-token");
    }
}
