package dev.drover.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.execstream.FakeExecAgent;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kubectl drover exec} against a server that speaks the exec channel protocol (as the API server relays the
 * gateway's): input round-tripped, the exit code passed through, a refusal said as the server says it.
 */
class ExecCommandTest {

    @TempDir
    Path dir;

    FakeExecAgent server;
    Path kubeconfig;

    @BeforeEach
    void start() throws Exception {
        server = new FakeExecAgent(dir);
        kubeconfig = dir.resolve("kubeconfig");
        Files.writeString(kubeconfig, """
                apiVersion: v1
                kind: Config
                clusters: [{name: c, cluster: {server: "https://127.0.0.1:%d", certificate-authority-data: %s}}]
                users: [{name: u, user: {token: kube-token}}]
                contexts: [{name: x, context: {cluster: c, user: u, namespace: team-a}}]
                current-context: x
                """.formatted(
                server.port(),
                Base64.getEncoder().encodeToString(server.certificatePem().getBytes(StandardCharsets.US_ASCII))));
    }

    @AfterEach
    void stop() {
        server.close();
    }

    record Run(int exit, String out, String err) {}

    Run run(String input, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        InputStream in = new ByteArrayInputStream(input.getBytes(StandardCharsets.UTF_8));
        int exit = KubectlDrover.run(
                args,
                in,
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void catGetsTheInputBackAndExitsZero() {
        Run r = run("one\ntwo\n", "exec", "-i", "web", "main", "--kubeconfig", kubeconfig.toString(), "--", "cat");
        assertThat(r.err()).isEmpty();
        assertThat(r.out()).isEqualTo("one\ntwo\n");
        assertThat(r.exit()).isZero();
        assertThat(server.opened)
                .containsExactly("/apis/agent.drover.dev/v1alpha1/namespaces/team-a/allocations/web/exec"
                        + "?task=main&command=cat&stdin=true&stdout=true&stderr=true&tty=false by null");
        assertThat(server.authorizations).containsExactly("Bearer kube-token");
    }

    @Test
    void aTerminalWithoutInputIsDroppedAsKubectlDoes() {
        Run r = run("", "exec", "-t", "web", "main", "--kubeconfig", kubeconfig.toString(), "--", "sh", "-c", "exit 3");
        assertThat(r.exit()).isEqualTo(3);
        assertThat(server.opened)
                .singleElement()
                .asString()
                .endsWith("&stdin=false&stdout=true&stderr=true&tty=false by null");
    }

    @Test
    void theCommandsExitCodeIsTheExitCode() {
        Run r = run("", "exec", "web", "main", "--kubeconfig", kubeconfig.toString(), "--", "sh", "-c", "exit 3");
        assertThat(r.exit()).isEqualTo(3);
        assertThat(r.err()).isEqualTo("bye\n");
        assertThat(server.opened.getFirst()).contains("&command=sh&command=-c&command=exit+3&stdin=false");
    }

    @Test
    void aRefusalIsSaidAsTheServerSaysIt() {
        Run r = run(
                "", "exec", "web", "main", "--token", "stranger", "--kubeconfig", kubeconfig.toString(), "--", "cat");
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.err())
                .contains("User \"stranger\" cannot get resource \"allocations/exec\"")
                .contains("(HTTP 403)");
        Run notRunning = run("", "exec", "web", "db", "--kubeconfig", kubeconfig.toString(), "--", "cat");
        assertThat(notRunning.exit()).isEqualTo(1);
        assertThat(notRunning.err()).contains("task db is not running (Dead) (HTTP 409)");
    }

    @Test
    void misuseIsExplained() {
        Run noCommand = run("", "exec", "web", "main");
        assertThat(noCommand.exit()).isEqualTo(2);
        assertThat(noCommand.err().lines().findFirst().orElseThrow())
                .isEqualTo(
                        "kubectl drover: exec needs the command after `--`: kubectl drover exec ALLOC TASK -- CMD...");
        Run noDashes = run("", "exec", "web", "main", "ls", "-l");
        assertThat(noDashes.exit()).as("a command without -- before it").isEqualTo(2);
        assertThat(noDashes.err()).contains("exec needs the command after `--`");
        assertThat(run("", "exec", "web", "main", "extra", "--", "ls").err())
                .contains("exec takes ALLOC and TASK before `--`");
        Run flag = run("", "logs", "web", "main", "-i");
        assertThat(flag.exit()).isEqualTo(2);
        assertThat(flag.err()).contains("-i is a flag of exec");
        assertThat(run("", "exec", "--help").out())
                .contains("usage: kubectl drover exec ALLOC TASK [FLAGS] -- COMMAND [ARG...]", "-i, --stdin");
    }
}
