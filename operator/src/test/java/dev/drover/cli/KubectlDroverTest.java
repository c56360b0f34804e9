package dev.drover.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.testing.LiveThreads;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The plugin's command line and its stats table; logs and stats against a mock API server. */
class KubectlDroverTest {

    static final String API = "/apis/agent.drover.dev/v1alpha1/namespaces/team-a/allocations/web/";

    @TempDir
    Path dir;

    /** A mock API server over TLS (its certificate not checked) and a kubeconfig whose user has token {@code kube-token}. */
    final class ApiServer implements AutoCloseable {
        final KubernetesMockServer server = new KubernetesMockServer(true);
        final List<String> authorizations = new CopyOnWriteArrayList<>();
        final Path kubeconfig = dir.resolve("kubeconfig");

        ApiServer() throws Exception {
            server.init(InetAddress.getLoopbackAddress(), 0);
            Files.writeString(kubeconfig, """
                    apiVersion: v1
                    kind: Config
                    clusters: [{name: c, cluster: {server: "https://127.0.0.1:%d", insecure-skip-tls-verify: true}}]
                    users: [{name: u, user: {token: kube-token}}]
                    contexts: [{name: x, context: {cluster: c, user: u, namespace: team-a}}]
                    current-context: x
                    """.formatted(server.getPort()));
        }

        void answer(String path, int code, String body) {
            server.expect()
                    .get()
                    .withPath(path)
                    .andReply(code, request -> {
                        authorizations.add(request.getHeader("Authorization"));
                        return body;
                    })
                    .always();
        }

        void answerPost(String path, int code, String body) {
            server.expect()
                    .post()
                    .withPath(path)
                    .andReply(code, request -> {
                        authorizations.add(request.getHeader("Authorization"));
                        return body;
                    })
                    .always();
        }

        @Override
        public void close() {
            server.destroy();
        }
    }

    @Test
    void logsAreReadThroughTheApiServerWithTheKubeconfigsCredentials() throws Exception {
        try (ApiServer api = new ApiServer()) {
            api.answer(API + "log?task=main&stream=stdout&tail=5", 200, "hello\n");
            Run r = run("logs", "web", "main", "--tail", "5", "--kubeconfig", api.kubeconfig.toString());
            assertThat(r.err()).isEmpty();
            assertThat(r.exit()).isZero();
            assertThat(r.out()).isEqualTo("hello\n");
            assertThat(api.authorizations).containsExactly("Bearer kube-token");
        }
    }

    @Test
    void aTasksEscapeSequencesReachATerminalAsTextUnlessRaw() throws Exception {
        try (ApiServer api = new ApiServer()) {
            api.answer(API + "log?task=main&stream=stdout", 200, "\u001b]0;pwned\u0007\u001b[31mrød\u001b[0m\n");
            Run terminal = run(true, "logs", "web", "main", "--kubeconfig", api.kubeconfig.toString());
            assertThat(terminal.err()).isEmpty();
            assertThat(terminal.out()).isEqualTo("\\x1b]0;pwned\\x07\\x1b[31mrød\\x1b[0m\n");
            assertThat(run(true, "logs", "web", "main", "--raw", "--kubeconfig", api.kubeconfig.toString())
                            .out())
                    .isEqualTo("\u001b]0;pwned\u0007\u001b[31mrød\u001b[0m\n");
            assertThat(run("logs", "web", "main", "--kubeconfig", api.kubeconfig.toString())
                            .out())
                    .as("to a pipe or a file, as it is")
                    .isEqualTo("\u001b]0;pwned\u0007\u001b[31mrød\u001b[0m\n");
        }
    }

    /** A thread blocked in native code makes the JVM's exit wait up to 300 ms: the command leaves none behind. */
    @Test
    void aCommandLeavesNoHttpClientThreadBehind() throws Exception {
        try (ApiServer api = new ApiServer()) {
            api.answer(API + "log?task=main&stream=stdout", 200, "hello\n");
            Set<Long> before = LiveThreads.ids(LiveThreads.now());
            Run r = run("logs", "web", "main", "--kubeconfig", api.kubeconfig.toString());
            assertThat(r.exit()).isZero();
            assertThat(LiveThreads.startedSince(
                            before,
                            t -> !(t.name().startsWith("HttpClient-")
                                    && t.name().endsWith("-SelectorManager"))))
                    .as("the JDK client's selector thread, ended with the command")
                    .isEmpty();
        }
    }

    /** A kubeconfig user with {@code as} (impersonation) is read by fabric8's client, as before: it still works. */
    @Test
    void aKubeconfigThePluginsOwnClientDoesNotSupportGoesThroughFabric8() throws Exception {
        try (ApiServer api = new ApiServer()) {
            Files.writeString(
                    api.kubeconfig,
                    Files.readString(api.kubeconfig).replace("{token: kube-token}", "{token: kube-token, as: admin}"));
            api.answer(API + "log?task=main&stream=stdout", 200, "hello\n");
            Run r = run("logs", "web", "main", "--kubeconfig", api.kubeconfig.toString());
            assertThat(r.err()).isEmpty();
            assertThat(r.out()).isEqualTo("hello\n");
            assertThat(api.authorizations).containsExactly("Bearer kube-token");
        }
    }

    @Test
    void tokenReplacesTheKubeconfigUsersCredentials() throws Exception {
        try (ApiServer api = new ApiServer()) {
            api.answer(API + "log?task=main&stream=stderr", 200, "oops\n");
            Run r = run(
                    "logs", "web", "main", "--stderr", "--token", "other", "--kubeconfig", api.kubeconfig.toString());
            assertThat(r.out()).isEqualTo("oops\n");
            assertThat(api.authorizations).containsExactly("Bearer other");
        }
    }

    @Test
    void aClusterWithoutTheGatewayIsSaidInOneSentence() throws Exception {
        try (ApiServer api = new ApiServer()) {
            api.answer(API + "stats", 404, """
                    {"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,
                     "message":"the server could not find the requested resource"}""");
            Run r = run("stats", "web", "--kubeconfig", api.kubeconfig.toString());
            assertThat(r.exit()).isEqualTo(1);
            assertThat(r.err()).isEqualTo("kubectl drover: " + KubectlDrover.GATEWAY_MISSING + "\n");
        }
    }

    @Test
    void aFailuresTextReachesTheTerminalWithoutItsEscapes() throws Exception {
        Run r = run(
                "stats",
                "web",
                "--kubeconfig",
                dir.resolve("k\u001b]0;owned\u0007\u001b[2J").toString());
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.err()).contains("cannot read the kubeconfig").doesNotContain("\u001b", "\u0007");
    }

    @Test
    void theApiServersRefusalIsShownAsItSaysIt() throws Exception {
        try (ApiServer api = new ApiServer()) {
            api.answer(API + "log?task=main&stream=stdout", 403, """
                    {"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,
                     "message":"allocations.agent.drover.dev \\"web\\" is forbidden: User \\"bob\\" cannot get resource \\"allocations/log\\""}""");
            Run r = run("logs", "web", "main", "--kubeconfig", api.kubeconfig.toString());
            assertThat(r.exit()).isEqualTo(1);
            assertThat(r.err())
                    .contains("User \"bob\" cannot get resource \"allocations/log\"")
                    .contains("HTTP 403");
        }
    }

    @Test
    void aLongRefusalStillEndsWithItsHttpStatus() throws Exception {
        try (ApiServer api = new ApiServer()) {
            api.answer(API + "log?task=main&stream=stdout", 403, """
                    {"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,
                     "message":"allocations.agent.drover.dev \\"web\\" is forbidden: User \\"system:serviceaccount:team-a:a-rather-long-name\\" cannot get resource \\"allocations/log\\" in API group \\"agent.drover.dev\\" in the namespace \\"team-a\\""}""");
            Run r = run("logs", "web", "main", "--kubeconfig", api.kubeconfig.toString());
            assertThat(r.exit()).isEqualTo(1);
            assertThat(r.err().strip())
                    .as("the message may be cut, its status never")
                    .contains("is forbidden: User")
                    .endsWith("(HTTP 403)");
        }
    }

    @Test
    void signalPostsThroughTheApiServerAndSaysWhatWasSentOrWhyNot() throws Exception {
        try (ApiServer api = new ApiServer()) {
            api.answerPost(API + "signal?task=main&signal=usr1", 200, """
                    {"task":"main","signal":"SIGUSR1","message":"sent SIGUSR1 to task main of allocation team-a/web"}""");
            api.answerPost(API + "signal?task=init&signal=HUP", 409, """
                    {"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Conflict","code":409,
                     "message":"the agent of node n1: task init of allocation team-a/web is not running (Dead)"}""");

            Run sent = run("signal", "web", "main", "usr1", "--kubeconfig", api.kubeconfig.toString());
            assertThat(sent.exit()).isZero();
            assertThat(sent.out()).isEqualTo("sent SIGUSR1 to task main of allocation team-a/web\n");
            assertThat(api.authorizations).containsExactly("Bearer kube-token");

            Run notRunning = run("signal", "web", "init", "HUP", "--kubeconfig", api.kubeconfig.toString());
            assertThat(notRunning.exit()).isEqualTo(1);
            assertThat(notRunning.err())
                    .isEqualTo("kubectl drover: the agent of node n1: task init of allocation team-a/web is not"
                            + " running (Dead) (HTTP 409)\n");
        }
        Run misuse = run("signal", "web", "main");
        assertThat(misuse.exit()).isEqualTo(2);
        assertThat(misuse.err()).contains("signal needs ALLOC, TASK and SIGNAL");
    }

    record Run(int exit, String out, String err) {}

    static Run run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = KubectlDrover.run(
                args,
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    /** As {@link #run(String...)}, its output a terminal when {@code terminal}. */
    static Run run(boolean terminal, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = KubectlDrover.run(
                args,
                java.io.InputStream.nullInputStream(),
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8),
                terminal);
        return new Run(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void misusedCommandLinesExitTwoWithTheReasonAndTheUsage() {
        assertThat(run().exit()).isEqualTo(2);
        assertThat(run("help").exit()).isZero();
        Run unknown = run("attach", "web");
        assertThat(unknown.exit()).isEqualTo(2);
        assertThat(unknown.err())
                .startsWith("kubectl drover: unknown command \"attach\" (commands: logs,")
                .contains("usage:");
        assertThat(run("logs", "web").err()).contains("logs needs ALLOC and TASK");
        assertThat(run("stats").err()).contains("stats needs ALLOC");
        assertThat(run("restart").err()).contains("restart needs ALLOC, and TASK to restart one task only");
        assertThat(run("restart", "web", "main", "side").exit()).isEqualTo(2);
        assertThat(run("restart", "web", "--json").err()).contains("--json is a flag of stats, not of restart");
        assertThat(run("help").out()).contains("restart ALLOC [TASK]");
        assertThat(run("stats", "web", "-f").err()).contains("-f is a flag of logs, not of stats");
        assertThat(run("logs", "web", "main", "--json").err()).contains("--json is a flag of stats, not of logs");
        assertThat(run("logs", "web", "main", "--tail", "ten").err()).contains("--tail needs a number of lines");
        assertThat(run("status", "web", "-n").err()).contains("-n needs a value");
        assertThat(run("status", "web", "--verbos").err()).contains("unknown flag \"--verbos\"");
    }

    @Test
    void aWellFormedCommandIsRead() throws Exception {
        PluginCommand c = PluginCommandLine.parse(
                new String[] {"logs", "-n", "team-a", "web", "main", "-f", "--stderr", "--tail", "20"});
        assertThat(c)
                .isEqualTo(new PluginCommand(
                        "logs",
                        java.util.List.of("web", "main"),
                        "team-a",
                        true,
                        "stderr",
                        "20",
                        false,
                        null,
                        null,
                        null,
                        null,
                        false,
                        false,
                        List.of(),
                        false,
                        false,
                        false));
        PluginCommand kubectlStyle = PluginCommandLine.parse(new String[] {
            "stats", "web", "--namespace=team-b", "--context=prod", "--kubeconfig", "/tmp/kc", "--token=abc"
        });
        assertThat(kubectlStyle)
                .isEqualTo(new PluginCommand(
                        "stats",
                        java.util.List.of("web"),
                        "team-b",
                        false,
                        "stdout",
                        null,
                        false,
                        null,
                        "prod",
                        "/tmp/kc",
                        "abc",
                        false,
                        false,
                        List.of(),
                        false,
                        false,
                        false));
    }

    @Test
    void anUnreadableKubeconfigIsAClearFailure() {
        Run r = run("status", "web", "--kubeconfig", "/nonexistent/kubeconfig");
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.err()).startsWith("kubectl drover: cannot read the kubeconfig /nonexistent/kubeconfig");
    }

    @Test
    void statsReadAsTablesWithDashesForWhatWasNotReported() throws Exception {
        String report = """
                {"allocation": "default/train-1", "node": "gpu-7", "windowSeconds": 0.25,
                 "resourceUsage": {"cpu": {"seconds": 412.5, "percent": 98.4}, "memory": {"rssBytes": 1288490188}},
                 "tasks": {
                   "train": {"state": "Running",
                     "resourceUsage": {"cpu": {"seconds": 412.5, "percent": 98.4}, "memory": {"rssBytes": 1288490188}},
                     "devices": [{"id": "GPU-0", "gpuUtilPercent": 37.0, "memoryUsedMiB": 2048, "memoryTotalMiB": 15360,
                                  "temperatureC": 48.0}]},
                   "init": {"state": "Dead"},
                   "probe": {"state": "Running", "error": "process 42 is gone"}},
                 "devices": [{"vendor": "nvidia", "type": "gpu", "model": "Tesla T4", "ids": ["GPU-0"],
                              "gpuUtilPercent": 37.0, "memoryUsedMiB": 2048, "memoryTotalMiB": 15360}]}
                """;
        String table = AllocStats.render(new ObjectMapper().readTree(report));
        assertThat(table).isEqualTo("""
                Allocation default/train-1 on node gpu-7, CPU measured over 0.25 s

                Task   State    CPU                   CPU Time  Memory
                train  Running  98.4 %                412.5 s   1.2 GiB
                init   Dead     -                     -         -
                probe  Running  (process 42 is gone)  -         -
                (all)           98.4 %                412.5 s   1.2 GiB

                Devices
                Task   Device                       GPU   Memory          Temperature  Power
                train  GPU-0                        37 %  2048/15360 MiB  48 °C        -
                (all)  nvidia/gpu/Tesla T4 [GPU-0]  37 %  2048/15360 MiB  -            -
                """);
    }
}
