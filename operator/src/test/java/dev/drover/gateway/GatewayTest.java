package dev.drover.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code drover-agent.jar gateway}: its flags, its help, and a start that cannot succeed said plainly. */
class GatewayTest {

    @TempDir
    Path dir;

    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    final ByteArrayOutputStream err = new ByteArrayOutputStream();
    final AtomicBoolean waited = new AtomicBoolean();

    int run(String... args) {
        return Gateway.run(
                args,
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8),
                () -> waited.set(true),
                level -> {});
    }

    @Test
    void helpNamesEveryFlag() {
        assertThat(run("--help")).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8))
                .contains(
                        "--port",
                        "--health-port",
                        "--tls-cert-file",
                        "--tls-key-file",
                        "--kubeconfig",
                        "--peer-token-file",
                        "--log-level");
    }

    @Test
    void flagsAreReadInBothForms() {
        Gateway.Options o = Gateway.Options.parse(
                new String[] {"--port=9443", "--peer-token-file", "/t", "--tls-cert-file=/c", "--tls-key-file", "/k"});
        assertThat(o.port()).isEqualTo(9443);
        assertThat(o.peerTokenFile()).isEqualTo(Path.of("/t"));
        assertThat(o.certFile()).isEqualTo(Path.of("/c"));
        assertThat(o.keyFile()).isEqualTo(Path.of("/k"));
        assertThat(Gateway.Options.parse(new String[0]).port()).isEqualTo(8443);
        assertThat(Gateway.Options.parse(new String[0]).healthPort()).isEqualTo(8444);
        assertThat(Gateway.Options.parse(new String[] {"--health-port=-1"}).healthPort())
                .isEqualTo(-1);
    }

    @Test
    void badFlagsExitTwoWithTheUsage() {
        assertThat(run("--port", "http")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("--port: \"http\" is not a port number", "usage:");
        assertThat(run("--health-port", "-2")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("--health-port: \"-2\" is not a port number");
        assertThat(run("--frobnicate", "1")).isEqualTo(2);
    }

    @Test
    void aMissingCertificateIsAFailedStartNotAWait() throws Exception {
        Path kubeconfig = dir.resolve("kubeconfig");
        java.nio.file.Files.writeString(kubeconfig, """
                apiVersion: v1
                kind: Config
                clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
                users: [{name: u, user: {token: t}}]
                contexts: [{name: x, context: {cluster: c, user: u}}]
                current-context: x
                """);
        int exit = run(
                "--port",
                "0",
                "--health-port",
                "0",
                "--kubeconfig",
                kubeconfig.toString(),
                "--tls-cert-file",
                dir.resolve("none.crt").toString(),
                "--tls-key-file",
                dir.resolve("none.key").toString());
        assertThat(exit).isEqualTo(1);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("cannot start", "none.crt");
        assertThat(waited).isFalse();
    }
}
