package dev.drover.cli.kube;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import org.junit.jupiter.api.Test;

/** The client made for a target: what it sends and what it withholds. */
class KubeClientTest {

    static KubeTarget target(String server, String tlsServerName, String token) {
        return new KubeTarget(
                URI.create(server),
                null,
                null,
                null,
                false,
                tlsServerName,
                null,
                null,
                token,
                null,
                null,
                null,
                token == null ? null : "--token",
                null);
    }

    /**
     * A tls-server-name SNI cannot carry ('_', a trailing dot, an IP address) once failed with the JDK's bare
     * "Contains non-LDH ASCII characters": the certificate must still carry the name, only no SNI is sent.
     */
    @Test
    void aTlsServerNameThatSniCannotCarryIsNoError() throws Exception {
        for (String name : new String[] {"under_score.example", "api.example.", "::1", "10.0.0.1"}) {
            try (KubeClient client = KubeClient.open(target("https://127.0.0.1:6443", name, null), line -> {})) {
                assertThat(client.target().tlsServerName()).isEqualTo(name);
            }
        }
    }

    @Test
    void credentialsForAnHttpServerAreWithheld() throws Exception {
        try (KubeClient http = KubeClient.open(target("http://127.0.0.1:8001", null, "t"), line -> {});
                KubeClient https = KubeClient.open(target("https://127.0.0.1:6443", null, "t"), line -> {});
                KubeClient none = KubeClient.open(target("http://127.0.0.1:8001", null, null), line -> {})) {
            assertThat(http.credentialsWithheld()).isTrue();
            assertThat(https.credentialsWithheld()).isFalse();
            assertThat(none.credentialsWithheld()).as("nothing to withhold").isFalse();
        }
    }
}
