package dev.drover.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.local.LocalApiServer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Identities on the local cluster through the real kubectl: {@code create token} and {@code auth whoami}. */
class KubectlIdentityTest {

    @RegisterExtension
    static final LocalCluster CLUSTER = new LocalCluster("local");

    static LocalApiServer server;
    static Kubectl kubectl;

    @BeforeAll
    static void start() throws Exception {
        server = CLUSTER.server();
        kubectl = CLUSTER.kubectl();
    }

    @Test
    void whoamiNamesTheAdministratorInSystemMasters() {
        String out = kubectl.run("auth", "whoami").assertOk().out();
        assertThat(out)
                .containsPattern("Username\\s+drover-local-admin")
                .containsPattern("Groups\\s+\\[system:masters");
    }

    @Test
    void createTokenMintsATokenThatKubectlIsThenTheServiceAccountWithAndTheNodeInExtra() {
        kubectl.run("create", "serviceaccount", "builder").assertOk();
        String token = kubectl.run(
                        "create",
                        "token",
                        "builder",
                        "--duration",
                        "2h",
                        "--bound-object-kind",
                        "Node",
                        "--bound-object-name",
                        "local")
                .assertOk()
                .out()
                .strip();
        assertThat(token.split("\\.")).hasSize(3);

        String me = kubectl.run("--token", token, "auth", "whoami", "-o", "json")
                .assertOk()
                .out();
        assertThat(me)
                .contains("\"username\": \"system:serviceaccount:default:builder\"")
                .contains("\"system:serviceaccounts:default\"")
                .contains("\"authentication.kubernetes.io/node-name\": [")
                .contains("\"local\"");

        var wrong = kubectl.run("--token", token + "x", "get", "nodes");
        assertThat(wrong.exitCode()).isNotZero();
        assertThat(wrong.err()).contains("You must be logged in to the server");

        var tooShort = kubectl.run("create", "token", "builder", "--duration", "5m");
        assertThat(tooShort.exitCode()).isNotZero();
        assertThat(tooShort.err()).contains("may not specify a duration less than 10 minutes");
    }
}
