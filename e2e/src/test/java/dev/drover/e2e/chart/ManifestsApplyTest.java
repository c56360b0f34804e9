package dev.drover.e2e.chart;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.e2e.Kubectl;
import dev.drover.local.LocalApiServer;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code kubectl apply -f manifests/} on a cluster that has never seen Drover installs all of it. */
class ManifestsApplyTest {

    @TempDir
    Path dir;

    LocalApiServer server;
    Kubectl kubectl;

    @BeforeEach
    void start() throws Exception {
        server = LocalApiServer.start(LocalApiServer.Options.defaults()
                .withCrds(List.of())
                .withNodes(List.of("local"))
                .withKubeconfig(dir.resolve("kubeconfig")));
        kubectl = new Kubectl(server.kubeconfig());
    }

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void applyingTheManifestsInstallsEverythingAndServesAllocations() {
        assertThat(kubectl.run("get", "alloc").exitCode())
                .as("no Allocation type before the install")
                .isNotZero();

        String out =
                kubectl.run("apply", "-f", Manifests.DIR.toString()).assertOk().out();

        assertThat(out)
                .contains(
                        "customresourcedefinition.apiextensions.k8s.io/allocations.drover.dev created",
                        "namespace/drover-system created",
                        "serviceaccount/drover created",
                        "configmap/drover created",
                        "clusterrole.rbac.authorization.k8s.io/drover created",
                        "clusterrolebinding.rbac.authorization.k8s.io/drover created",
                        "service/drover-metrics created",
                        "daemonset.apps/drover created");
        assertThat(kubectl.run("get", "alloc", "-A").assertOk().err()).contains("No resources found");
        assertThat(kubectl.run(
                                "-n",
                                "drover-system",
                                "get",
                                "daemonset",
                                "drover",
                                "-o",
                                "jsonpath={.spec.template.spec.priorityClassName}")
                        .assertOk()
                        .out())
                .isEqualTo("system-node-critical");
        kubectl.runWithInput("""
                apiVersion: drover.dev/v1alpha1
                kind: Allocation
                metadata: {name: hello, namespace: default}
                spec:
                  nodeName: local
                  tasks:
                  - {name: web, driver: mock, config: {runFor: 1h}}
                """, "apply", "-f", "-").assertOk();
        assertThat(kubectl.run("get", "alloc", "hello", "-o", "jsonpath={.spec.nodeName}")
                        .assertOk()
                        .out())
                .isEqualTo("local");
    }

    @Test
    void applyingTheManifestsAgainChangesNothing() {
        kubectl.run("apply", "-f", Manifests.DIR.toString()).assertOk();

        String again =
                kubectl.run("apply", "-f", Manifests.DIR.toString()).assertOk().out();

        assertThat(again.lines()).isNotEmpty().allMatch(line -> line.endsWith(" unchanged"), "ends with unchanged");
    }
}
