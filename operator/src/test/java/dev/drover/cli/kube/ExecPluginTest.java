package dev.drover.cli.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Exec credential plugins: what they are told, what they answer, and the ones that misbehave. */
class ExecPluginTest {

    @TempDir
    Path dir;

    Path script(String name, String body) throws Exception {
        Path file = dir.resolve(name);
        Files.writeString(file, "#!/bin/sh\n" + body);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwx------"));
        return file;
    }

    static final Consumer<String> QUIET = line -> {};

    static ExecPlugin.Credential run(ExecConfig exec, Duration deadline) throws KubeconfigException {
        return ExecPlugin.run(exec, deadline, QUIET, System.getenv("PATH"));
    }

    static ExecConfig exec(Path command, List<String> args, Map<String, String> env, Map<String, Object> cluster) {
        return new ExecConfig(ExecPlugin.V1, command.toString(), args, env, null, cluster);
    }

    @Test
    void theTokenItPrintsIsTheCredentialAndItIsToldWhatItNeeds() throws Exception {
        Path plugin = script("token.sh", """
                printf '%s' "$KUBERNETES_EXEC_INFO" > "$1"
                echo "$REGION" > "$1.env"
                echo '{"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                       "status": {"token": "from-plugin", "expirationTimestamp": "2030-01-01T00:00:00Z"}}'
                """);
        Path seen = dir.resolve("seen");
        ExecPlugin.Credential c = ExecPlugin.run(
                exec(
                        plugin,
                        List.of(seen.toString()),
                        Map.of("REGION", "eu-1"),
                        Map.of("server", "https://10.0.0.1:6443", "insecure-skip-tls-verify", false)),
                QUIET);
        assertThat(c.token()).isEqualTo("from-plugin");
        assertThat(Files.readString(dir.resolve("seen.env")).strip()).isEqualTo("eu-1");
        var info = new ObjectMapper().readTree(Files.readString(seen));
        assertThat(info.path("apiVersion").asText()).isEqualTo(ExecPlugin.V1);
        assertThat(info.path("kind").asText()).isEqualTo("ExecCredential");
        assertThat(info.path("spec").path("interactive").asBoolean(true)).isFalse();
        assertThat(info.path("spec").path("cluster").path("server").asText()).isEqualTo("https://10.0.0.1:6443");
    }

    @Test
    void aClientCertificateIsTheCredentialWhenThereIsNoToken() throws Exception {
        Path plugin = script("cert.sh", """
                echo '{"apiVersion": "client.authentication.k8s.io/v1beta1", "kind": "ExecCredential",
                       "status": {"clientCertificateData": "CERT", "clientKeyData": "KEY"}}'
                """);
        ExecPlugin.Credential c = ExecPlugin.run(
                new ExecConfig(ExecPlugin.V1BETA1, plugin.toString(), List.of(), Map.of(), null, null), QUIET);
        assertThat(c.token()).isNull();
        assertThat(new String(c.clientCertPem())).isEqualTo("CERT");
        assertThat(new String(c.clientKeyPem())).isEqualTo("KEY");
    }

    @Test
    void aFailingPluginIsOneSentenceWithWhatItSaid() throws Exception {
        Path plugin = script("fail.sh", "echo 'please run sso login\u001b[2J' >&2; exit 3\n");
        assertThatThrownBy(() -> ExecPlugin.run(exec(plugin, List.of(), Map.of(), null), QUIET))
                .isInstanceOf(KubeconfigException.class)
                .hasMessageContaining("failed (exit code 3): please run sso login")
                .hasMessageNotContaining("\u001b");
        Path wrong = script("wrong.sh", "echo '{\"kind\": \"ExecCredential\", \"apiVersion\": \"v9\"}'\n");
        assertThatThrownBy(() -> ExecPlugin.run(exec(wrong, List.of(), Map.of(), null), QUIET))
                .hasMessageContaining("answered in \"v9\", not the client.authentication.k8s.io/v1");
        assertThatThrownBy(() -> ExecPlugin.run(
                        new ExecConfig(
                                ExecPlugin.V1,
                                dir.resolve("absent").toString(),
                                List.of(),
                                Map.of(),
                                "install it: brew",
                                null),
                        QUIET))
                .hasMessageStartingWith("cannot run the exec plugin")
                .hasMessageEndingWith(": install it: brew");
    }

    /**
     * A login prompt (device code) must reach the user while the plugin waits for the login: this plugin waits until
     * the prompt has been seen, so a stderr held back until the end would leave it waiting out its deadline.
     */
    @Test
    void whatThePluginSaysOnStderrIsPassedOnAsItComes() throws Exception {
        Path seen = dir.resolve("prompt-seen");
        Path plugin = script("login.sh", """
                echo 'open https://login.example and enter code QX7-41' >&2
                while [ ! -f "$1" ]; do sleep 0.05; done
                printf 'partial line' >&2
                echo '{"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                       "status": {"token": "after-login"}}'
                """);
        List<String> lines = new java.util.concurrent.CopyOnWriteArrayList<>();
        ExecPlugin.Credential c = assertTimeoutPreemptively(
                Duration.ofSeconds(20),
                () -> ExecPlugin.run(
                        exec(plugin, List.of(seen.toString()), Map.of(), null),
                        Duration.ofSeconds(15),
                        line -> {
                            lines.add(line);
                            try {
                                Files.writeString(seen, "");
                            } catch (java.io.IOException e) {
                                throw new java.io.UncheckedIOException(e);
                            }
                        },
                        System.getenv("PATH")));
        assertThat(c.token()).isEqualTo("after-login");
        assertThat(lines).containsExactly("open https://login.example and enter code QX7-41", "partial line");
    }

    @Test
    void aFailuresMessageEndsWithTheLastOfWhatThePluginSaid() throws Exception {
        Path plugin = script("chatty.sh", """
                i=0; while [ $i -lt 2000 ]; do echo "progress line $i of a long story"; i=$((i+1)); done >&2
                echo 'error: the refresh token has expired' >&2
                exit 1
                """);
        List<String> lines = new java.util.concurrent.CopyOnWriteArrayList<>();
        assertThatThrownBy(() -> ExecPlugin.run(
                        exec(plugin, List.of(), Map.of(), null),
                        Duration.ofSeconds(20),
                        lines::add,
                        System.getenv("PATH")))
                .hasMessageStartingWith("the exec plugin")
                .hasMessageEndingWith("error: the refresh token has expired");
        assertThat(lines).hasSize(2001);
    }

    /** A bare command is looked up in PATH's absolute directories: "." and empty entries are passed over. */
    @Test
    void aBareCommandIsNotTakenFromARelativePathEntry() throws Exception {
        Path bin = Files.createDirectories(dir.resolve("bin"));
        Path plugin = script("bin/cred-plugin", """
                echo '{"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                       "status": {"token": "found"}}'
                """);
        String relative = Path.of("").toAbsolutePath().relativize(bin).toString();
        ExecConfig bare =
                new ExecConfig(ExecPlugin.V1, "cred-plugin", List.of(), Map.of(), "install cred-plugin", null);
        assertThatThrownBy(() -> ExecPlugin.run(bare, Duration.ofSeconds(10), QUIET, ":.:" + relative))
                .hasMessage("cannot run the exec plugin \"cred-plugin\" (not found in PATH's absolute directories):"
                        + " install cred-plugin");
        assertThat(ExecPlugin.run(bare, Duration.ofSeconds(10), QUIET, relative + ":" + bin)
                        .token())
                .isEqualTo("found");
        assertThat(ExecPlugin.resolve("cred-plugin", "/nonexistent:" + bin)).isEqualTo(plugin.toString());
    }

    @Test
    void aPluginPrintingWithoutEndIsCutOff() throws Exception {
        Path plugin = script("flood.sh", "sleep 301 &\nhead -c 104857600 /dev/zero\nwait\n");
        long start = System.nanoTime();
        assertThatThrownBy(() -> run(exec(plugin, List.of(), Map.of(), null), Duration.ofSeconds(20)))
                .isInstanceOf(KubeconfigException.class)
                .hasMessageEndingWith("printed more than 1 MiB");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(15));
        assertThat(started("sleep 301")).as("the plugin's child is ended too").isZero();
    }

    static long started(String commandLine) {
        return ProcessHandle.allProcesses()
                .filter(p -> p.info().commandLine().orElse("").equals(commandLine))
                .filter(p -> p.info().startInstant().isPresent())
                .filter(p -> p.info()
                        .startInstant()
                        .get()
                        .isAfter(java.time.Instant.now().minusSeconds(30)))
                .count();
    }

    @Test
    void aPluginThatHangsIsEndedAtTheDeadline() throws Exception {
        Path plugin = script("hang.sh", "sleep 300 &\necho started >&2\nwait\n");
        long start = System.nanoTime();
        assertThatThrownBy(() -> run(exec(plugin, List.of(), Map.of(), null), Duration.ofMillis(500)))
                .isInstanceOf(KubeconfigException.class)
                .hasMessageEndingWith("did not finish within 500 ms");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
        assertThat(ProcessHandle.allProcesses()
                        .filter(p -> p.info().commandLine().orElse("").equals("sleep 300"))
                        .filter(p -> p.info().startInstant().isPresent())
                        .filter(p -> p.info()
                                .startInstant()
                                .get()
                                .isAfter(java.time.Instant.now().minusSeconds(10)))
                        .count())
                .as("the plugin's child is ended too")
                .isZero();
    }
}
