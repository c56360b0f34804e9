package dev.drover.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.local.LocalApiServer;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the CRD's schema and columns give a kubectl user: explain, get -o wide, refused duplicate keys. */
class KubectlSchemaTest {

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

    @Test
    void explainShowsTheTasksDescriptionAndFields() {
        String out = kubectl.run("explain", "allocation.spec.tasks").assertOk().out();
        assertThat(out)
                .contains("KIND:", "Allocation", "FIELD: tasks <[]Object>")
                .contains("The tasks of the group, 1 to 64, keyed by name")
                .containsPattern("name\\s+<string> -required-")
                .containsPattern("driver\\s+<string> -required-")
                .contains("What runs the task: mock, raw_exec or exec")
                .containsPattern("checks\\s+<\\[\\]Object>");
        assertThat(kubectl.run("explain", "alloc.spec.tasks.env.name")
                        .assertOk()
                        .out())
                .contains("The variable's name, a shell identifier, unique in the task.");
        assertThat(kubectl.run("explain", "allocation").assertOk().out())
                .contains("One instance of a task group bound to one node");
    }

    @Test
    void wideShowsTheExtraColumnsAfterTheDefaultOnes() {
        kubectl.runWithInput("""
                        apiVersion: drover.dev/v1alpha1
                        kind: Allocation
                        metadata: {name: wide, namespace: default}
                        spec:
                          nodeName: local
                          type: Batch
                          tasks:
                          - {name: web, driver: mock}
                        """, "apply", "-f", "-").assertOk();
        kubectl.run("patch", "alloc", "wide", "--subresource=status", "--type=merge", "-p", """
                        {"status":{"clientStatus":"Running","clientDescription":"Tasks are running","ready":"1/1",
                         "restarts":0,"devices":"2 nvidia/gpu","network":{"mode":"bridge","ip":"172.26.64.7"}}}""")
                .assertOk();
        String plain = kubectl.run("get", "alloc", "wide").assertOk().out();
        assertThat(plain.lines().findFirst().orElseThrow().split("\\s+"))
                .containsExactly("NAME", "NODE", "STATUS", "READY", "RESTARTS", "AGE");
        String wide =
                kubectl.run("get", "alloc", "wide", "-o", "wide").assertOk().out();
        assertThat(wide.lines().findFirst().orElseThrow().split("\\s+"))
                .containsExactly(
                        "NAME",
                        "NODE",
                        "STATUS",
                        "READY",
                        "RESTARTS",
                        "AGE",
                        "TYPE",
                        "DESIRED",
                        "IP",
                        "DEVICES",
                        "DESCRIPTION");
        assertThat(wide)
                .containsPattern(
                        "wide\\s+local\\s+Running\\s+1/1\\s+0\\s+\\S+\\s+Batch\\s+Run\\s+172\\.26\\.64\\.7\\s+2 nvidia/gpu\\s+"
                                + "Tasks are running");
    }

    @Test
    void aRepeatedTaskNameIsRefusedNamingTheItem() {
        var result = kubectl.runWithInput("""
                apiVersion: drover.dev/v1alpha1
                kind: Allocation
                metadata: {name: twice, namespace: default}
                spec:
                  nodeName: local
                  tasks:
                  - {name: web, driver: mock}
                  - {name: web, driver: mock}
                """, "apply", "-f", "-");
        assertThat(result.exitCode()).isNotZero();
        assertThat(result.err()).contains("spec.tasks[1]: Duplicate value: map[string]interface {}{\"name\":\"web\"}");
        assertThat(kubectl.run("get", "alloc", "twice").exitCode()).isNotZero();
        var checks = kubectl.runWithInput("""
                apiVersion: drover.dev/v1alpha1
                kind: Allocation
                metadata: {name: checks-twice, namespace: default}
                spec:
                  nodeName: local
                  tasks:
                  - name: web
                    driver: mock
                    checks: [{name: up, type: tcp, port: 1}, {name: up, type: tcp, port: 2}]
                """, "apply", "-f", "-");
        assertThat(checks.err())
                .contains("spec.tasks[0].checks[1]: Duplicate value: map[string]interface {}{\"name\":\"up\"}");
    }
}
