package dev.drover.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.local.LocalApiServer;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code kubectl apply --server-side} against the local API server: managers share an allocation by task. */
class KubectlServerSideApplyTest {

    @TempDir
    static Path dir;

    static LocalApiServer server;
    static Kubectl kubectl;

    @BeforeAll
    static void start() throws Exception {
        server = LocalApiServer.start(LocalApiServer.Options.defaults()
                .withNodes(List.of("local"))
                .withKubeconfig(dir.resolve("kubeconfig")));
        kubectl = new Kubectl(server.kubeconfig());
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    private static String alloc(String name, String spec) {
        return """
                apiVersion: drover.dev/v1alpha1
                kind: Allocation
                metadata: {name: %s, namespace: default}
                spec:
                %s""".formatted(name, spec.indent(2));
    }

    private static Kubectl.Result apply(String manager, String yaml, String... more) {
        List<String> args =
                new java.util.ArrayList<>(List.of("apply", "--server-side", "--field-manager=" + manager, "-f", "-"));
        args.addAll(List.of(more));
        return kubectl.runWithInput(yaml, args.toArray(String[]::new));
    }

    private static String get(String name, String jsonpath) {
        return kubectl.run("get", "alloc", name, "-o", "jsonpath=" + jsonpath)
                .assertOk()
                .out();
    }

    @Test
    void twoManagersEditingDifferentTasksDoNotClobberEachOther() {
        String alice = """
                nodeName: local
                tasks:
                - {name: a, driver: mock, config: {runFor: 1h}}""";
        assertThat(apply("alice", alloc("shared", alice)).assertOk().out())
                .contains("allocation.drover.dev/shared serverside-applied");
        apply("bob", alloc("shared", "tasks:\n- {name: b, driver: mock}")).assertOk();
        assertThat(get("shared", "{.spec.tasks[*].name}")).isEqualTo("a b");

        apply("alice", alloc("shared", alice.replace("1h", "2h"))).assertOk();
        assertThat(get("shared", "{.spec.tasks[*].name} {.spec.tasks[0].config.runFor}"))
                .as("alice's new apply changes her task and keeps bob's")
                .isEqualTo("a b 2h");
        assertThat(get("shared", "{.metadata.managedFields[*].manager}")).isEqualTo("alice bob");

        String bobTakesA = "tasks:\n- {name: b, driver: mock}\n- {name: a, driver: mock, config: {runFor: 5m}}";
        var refused = apply("bob", alloc("shared", bobTakesA));
        assertThat(refused.exitCode()).isNotZero();
        assertThat(refused.err())
                .contains("Apply failed with 1 conflict: conflict with \"alice\" using drover.dev/v1alpha1:"
                        + " .spec.tasks[name=\"a\"].config.runFor");
        assertThat(get("shared", "{.spec.tasks[0].config.runFor}")).isEqualTo("2h");

        apply("bob", alloc("shared", bobTakesA), "--force-conflicts").assertOk();
        assertThat(get("shared", "{.spec.tasks[*].name} {.spec.tasks[0].config.runFor}"))
                .isEqualTo("a b 5m");
        apply("alice", alloc("shared", "nodeName: local\ntasks:\n- {name: a, driver: mock}"))
                .assertOk();
        assertThat(get("shared", "{.spec.tasks[0].config.runFor}"))
                .as("bob owns runFor now: alice leaving it out does not remove it")
                .isEqualTo("5m");
    }

    @Test
    void applyingTheHelloExampleThenTheAgentsStatusWritesAndApplyingAgainKeepsBoth() {
        Path hello = Path.of("..", "examples", "hello.yaml");
        kubectl.run("apply", "--server-side", "-f", hello.toString()).assertOk();
        // the agent writes status as a JSON merge patch to /status
        kubectl.run(
                        "patch",
                        "alloc",
                        "hello",
                        "--subresource=status",
                        "--type=merge",
                        "-p",
                        "{\"status\":{\"clientStatus\":\"Running\",\"ready\":\"1/1\",\"restarts\":0}}")
                .assertOk();
        assertThat(kubectl.run("apply", "--server-side", "-f", hello.toString())
                        .assertOk()
                        .out())
                .contains("serverside-applied");
        assertThat(get("hello", "{.status.clientStatus} {.spec.tasks[0].name}")).isEqualTo("Running web");
        assertThat(get("hello", "{range .metadata.managedFields[*]}{.manager}/{.operation}/{.subresource}{\" \"}{end}"))
                .isEqualTo("kubectl/Apply/ kubectl-patch/Update/status ");
    }
}
