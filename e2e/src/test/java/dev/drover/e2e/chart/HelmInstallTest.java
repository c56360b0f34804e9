package dev.drover.e2e.chart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.e2e.Kubectl;
import dev.drover.local.LocalApiServer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The chart installed by the real Helm CLI (each of Helm 3 and 4 found, as {@link ChartLintTest} finds them) into
 * the local API server, as docs/local-cluster.md tells users to try it: installed, listed, upgraded, its agent's
 * RBAC checked with {@code kubectl auth can-i --as}, and uninstalled.
 */
class HelmInstallTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String NS = DroverChart.NAMESPACE;
    private static final String AGENT = "system:serviceaccount:" + NS + ":drover";

    @TempDir
    Path dir;

    static List<Path> helmBinaries() {
        return ChartLintTest.helmBinaries().toList();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("helmBinaries")
    void theChartInstallsUpgradesAndUninstallsWithItsAgentRbacInForce(Path helm) throws Exception {
        assumeTrue(
                helm != null,
                "no Helm CLI: set DROVER_HELM_BINARIES or put helm on PATH (.ci/run fetches Helm 3 and 4 from npm)");
        try (LocalApiServer server =
                LocalApiServer.start(LocalApiServer.Options.defaults().withKubeconfig(dir.resolve("kubeconfig")))) {
            Kubectl kubectl = new Kubectl(server.kubeconfig());
            // as on a fresh cluster, Helm installs the chart's CRD itself and waits until it is Established
            kubectl.run("delete", "crd", "allocations.drover.dev").assertOk();

            helm(helm, server, "install", "drover", "charts/drover", "-n", NS, "--create-namespace");
            assertThat(release(helm, server)).isEqualTo("deployed 1");
            kubectl.run("wait", "--for=condition=Established", "crd/allocations.drover.dev", "--timeout=5s")
                    .assertOk();
            kubectl.run("get", "poddisruptionbudget", "drover-gateway", "-n", NS)
                    .assertOk();
            kubectl.run("get", "daemonset", "drover", "-n", NS).assertOk();
            assertThat(kubectl.run("get", "secrets", "-n", NS, "-l", "owner=helm", "-o", "name")
                            .assertOk()
                            .out())
                    .contains("secret/sh.helm.release.v1.drover.v1");

            String tls = "jsonpath={.data}";
            String certificates = kubectl.run("get", "secret", "drover-gateway-tls", "-n", NS, "-o", tls)
                    .assertOk()
                    .out();
            String trusted = kubectl.run("get", "configmap", "drover-gateway-ca", "-n", NS, "-o", "jsonpath={.data}")
                    .assertOk()
                    .out();
            helm(helm, server, "upgrade", "drover", "charts/drover", "-n", NS);
            assertThat(release(helm, server)).isEqualTo("deployed 2");
            // the upgrade finds the gateway's certificates (lookup) and keeps them: agents keep trusting the gateway
            assertThat(kubectl.run("get", "secret", "drover-gateway-tls", "-n", NS, "-o", tls)
                            .assertOk()
                            .out())
                    .contains("tls.crt", "ca.crt", "client.key")
                    .isEqualTo(certificates);
            assertThat(kubectl.run("get", "configmap", "drover-gateway-ca", "-n", NS, "-o", "jsonpath={.data}")
                            .assertOk()
                            .out())
                    .isEqualTo(trusted);

            assertThat(kubectl.run("auth", "can-i", "list", "allocations", "--as", AGENT)
                            .assertOk()
                            .out()
                            .strip())
                    .isEqualTo("yes");
            Kubectl.Result create = kubectl.run("auth", "can-i", "create", "allocations", "--as", AGENT);
            assertThat(create.exitCode()).as(create.err()).isEqualTo(1);
            assertThat(create.out().strip()).isEqualTo("no");
            String outsider = kubectl.run("create", "token", "default", "-n", NS)
                    .assertOk()
                    .out()
                    .strip();
            Kubectl.Result refused =
                    kubectl.run("--token", outsider, "auth", "can-i", "list", "allocations", "--as", AGENT);
            assertThat(refused.exitCode()).isNotZero();
            assertThat(refused.err())
                    .contains("serviceaccounts \"drover\" is forbidden: User \"system:serviceaccount:" + NS
                            + ":default\" cannot impersonate resource \"serviceaccounts\" in API group \"\" in the"
                            + " namespace \"" + NS + "\"");

            helm(helm, server, "uninstall", "drover", "-n", NS);
            assertThat(release(helm, server)).isEmpty();
            assertThat(kubectl.run("get", "poddisruptionbudgets,daemonsets,deployments,secrets", "-n", NS, "-o", "name")
                            .assertOk()
                            .out())
                    .isBlank();
            assertThat(kubectl.run("get", "clusterrole", "drover").exitCode()).isNotZero();
        }
    }

    /** {@code STATUS REVISION} of the release drover in {@code helm list}, or empty when there is none. */
    private String release(Path helm, LocalApiServer server) throws Exception {
        JsonNode list = JSON.readTree(helm(helm, server, "list", "-n", NS, "-o", "json"));
        for (JsonNode r : list) {
            if (r.path("name").asText().equals("drover")) {
                return r.path("status").asText() + " " + r.path("revision").asText();
            }
        }
        return "";
    }

    /** Runs Helm from the checkout's root against {@code server}; its standard output, which must succeed. */
    private String helm(Path helm, LocalApiServer server, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(helm.toString()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command)
                .directory(DroverChart.DIR.resolve("..", "..").toFile())
                .redirectError(dir.resolve("helm.err").toFile());
        builder.environment().put("KUBECONFIG", server.kubeconfig().toString());
        builder.environment().put("HOME", dir.toString()); // Helm's and client-go's caches, not the user's
        builder.environment().put("HELM_CACHE_HOME", dir.resolve("helm-cache").toString());
        builder.environment().put("HELM_CONFIG_HOME", dir.resolve("helm-config").toString());
        builder.environment().put("HELM_DATA_HOME", dir.resolve("helm-data").toString());
        Process process = builder.start();
        process.getOutputStream().close();
        byte[] out = process.getInputStream().readAllBytes();
        assertThat(process.waitFor(60, TimeUnit.SECONDS))
                .as("%s finishes", command)
                .isTrue();
        String err = Files.readString(dir.resolve("helm.err"), StandardCharsets.UTF_8);
        assertThat(process.exitValue())
                .as("%s: %s%s", command, err, new String(out, StandardCharsets.UTF_8))
                .isZero();
        return new String(out, StandardCharsets.UTF_8);
    }
}
