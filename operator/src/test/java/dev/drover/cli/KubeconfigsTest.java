package dev.drover.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Faults of the user's setup are one sentence that says what to do. */
class KubeconfigsTest {

    @TempDir
    Path home;

    @Test
    void noKubeconfigAnywhereSaysWhereItLookedAndWhatToSet() throws Exception {
        assertThat(Kubeconfigs.missing(Map.of(), home))
                .isEqualTo("no kubeconfig: KUBECONFIG is not set and " + home.resolve(".kube/config")
                        + " does not exist; set KUBECONFIG, or pass --kubeconfig FILE");
        assertThat(Kubeconfigs.missing(Map.of("KUBECONFIG", "/nowhere/a:/nowhere/b"), home))
                .startsWith("no kubeconfig: KUBECONFIG names no readable file (/nowhere/a:/nowhere/b)");
        assertThat(Kubeconfigs.missing(Map.of("KUBERNETES_SERVICE_HOST", "10.0.0.1"), home))
                .as("in a pod, the service account is the config")
                .isNull();
        Files.createDirectories(home.resolve(".kube"));
        Files.writeString(home.resolve(".kube/config"), "apiVersion: v1\n");
        assertThat(Kubeconfigs.missing(Map.of(), home)).isNull();
        assertThat(Kubeconfigs.missing(Map.of("KUBECONFIG", "/nowhere:" + home.resolve(".kube/config")), home))
                .isNull();
    }

    @Test
    void aMissingContextIsNamedWithTheOnesThereAre() throws Exception {
        Path file = home.resolve("kubeconfig");
        Files.writeString(file, """
                apiVersion: v1
                kind: Config
                clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
                users: [{name: u, user: {token: t}}]
                contexts: [{name: prod, context: {cluster: c, user: u}}, {name: dev, context: {cluster: c, user: u}}]
                current-context: dev
                """);
        KubectlDroverTest.Run r =
                KubectlDroverTest.run("status", "web", "--kubeconfig", file.toString(), "--context", "staging");
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.err())
                .isEqualTo("kubectl drover: the kubeconfig has no context staging (its contexts: prod," + " dev)\n");
    }

    @Test
    void aRefusalSaysWhatTheCommandNeeds() {
        assertThat(KubectlDrover.explained(new CommandFailure("x is forbidden (HTTP 403)", 403), "logs"))
                .isEqualTo("not allowed: logs needs get on allocations/log in API group agent.drover.dev: x is"
                        + " forbidden (HTTP 403)");
        assertThat(KubectlDrover.explained(new CommandFailure("Unauthorized (HTTP 401)", 401), "stats"))
                .startsWith("the API server does not accept your credentials");
        assertThat(PluginCommandLine.ACCESS)
                .containsOnlyKeys(PluginCommandLine.COMMANDS.stream()
                        .map(dev.drover.cli.flags.Subcommand::name)
                        .toList());
    }

    @Test
    void aHostThatDoesNotResolveIsNotCalledARefusedConnection() {
        var failure = new java.net.ConnectException();
        failure.initCause(new java.nio.channels.UnresolvedAddressException());
        assertThat(ApiAnswers.unreachable("https://nowhere.invalid:6443/", failure)
                        .getMessage())
                .isEqualTo("cannot reach the API server at https://nowhere.invalid:6443/ (unknown host): is the"
                        + " cluster up, and is the kubeconfig's server right? (kubectl cluster-info)");
        assertThat(ApiAnswers.unreachable("https://h/", new java.net.ConnectException("refused"))
                        .getMessage())
                .contains("(connection refused)");
    }

    @Test
    void aClosedPortIsOneSentenceNamingTheServer() throws Exception {
        Path file = home.resolve("kubeconfig");
        int port;
        try (var socket = new java.net.ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        Files.writeString(file, """
                apiVersion: v1
                kind: Config
                clusters: [{name: c, cluster: {server: "http://127.0.0.1:%d"}}]
                users: [{name: u, user: {token: t}}]
                contexts: [{name: dev, context: {cluster: c, user: u}}]
                current-context: dev
                """.formatted(port));
        for (String verb : new String[] {"status", "stats"}) {
            KubectlDroverTest.Run r = KubectlDroverTest.run(verb, "web", "--kubeconfig", file.toString());
            assertThat(r.exit()).isEqualTo(1);
            assertThat(r.err())
                    .isEqualTo("kubectl drover: cannot reach the API server at http://127.0.0.1:" + port
                            + "/ (connection refused): is the cluster up, and is the kubeconfig's server right?"
                            + " (kubectl cluster-info)\n");
        }
    }
}
