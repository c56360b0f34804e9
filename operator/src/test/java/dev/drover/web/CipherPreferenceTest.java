package dev.drover.web;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import org.junit.jupiter.api.Test;

class CipherPreferenceTest {

    @Test
    void withoutC2ChaChaComesFirstAndEverythingElseKeepsItsOrder() {
        List<String> jvm = List.of(
                "TLS_AES_256_GCM_SHA384",
                "TLS_AES_128_GCM_SHA256",
                "TLS_CHACHA20_POLY1305_SHA256",
                "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
                "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256");

        assertThat(CipherPreference.ordered(jvm, true))
                .containsExactly(
                        "TLS_CHACHA20_POLY1305_SHA256",
                        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
                        "TLS_AES_256_GCM_SHA384",
                        "TLS_AES_128_GCM_SHA256",
                        "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384");
        assertThat(CipherPreference.ordered(jvm, false)).isEqualTo(jvm);
    }

    @Test
    void theClientOffersEverySuiteTheJvmWouldAndNoOther() throws Exception {
        SSLParameters p = CipherPreference.forClients();

        assertThat(p.getCipherSuites())
                .containsExactlyInAnyOrder(
                        SSLContext.getDefault().getDefaultSSLParameters().getCipherSuites());
        assertThat(p.getProtocols()).containsExactly("TLSv1.3", "TLSv1.2");
    }

    @Test
    void thisTestJvmHasC2() {
        // surefire's JVM runs with every compiler: AES-GCM (with its intrinsics) stays first there
        assertThat(CipherPreference.hasC2()).isTrue();
        assertThat(CipherPreference.forClients().getCipherSuites()[0]).doesNotContain("CHACHA20");
    }
}
