package dev.drover.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.authentication.UserInfo;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.junit.jupiter.api.Test;

/** Who a request is for: only the API server's front proxy, verified by certificate, may name a user. */
class RequestHeaderAuthTest {

    final TestCertificates frontProxy = new TestCertificates("front-proxy-ca");
    final TestCertificates impostor = new TestCertificates("front-proxy-ca");
    final AtomicReference<Instant> now = new AtomicReference<>(Instant.now());
    final AtomicInteger reads = new AtomicInteger();

    RequestHeaderAuthTest() throws Exception {}

    Map<String, String> configMap(String allowedNames) throws Exception {
        return Map.of(
                "requestheader-client-ca-file", frontProxy.caPem(),
                "requestheader-allowed-names", allowedNames,
                "requestheader-username-headers", "[\"X-Remote-User\"]",
                "requestheader-group-headers", "[\"X-Remote-Group\"]",
                "requestheader-extra-headers-prefix", "[\"X-Remote-Extra-\"]");
    }

    RequestHeaderAuth auth(Map<String, String> data) {
        return new RequestHeaderAuth(
                () -> {
                    reads.incrementAndGet();
                    return Optional.of(RequestHeaderAuth.Settings.of(data));
                },
                now::get);
    }

    static Map<String, List<String>> headers(String... pairs) {
        Map<String, List<String>> out = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            out.computeIfAbsent(pairs[i], k -> new ArrayList<>()).add(pairs[i + 1]);
        }
        return out;
    }

    static X509Certificate[] chain(TestCertificates.Issued issued) {
        return new X509Certificate[] {issued.certificate()};
    }

    @Test
    void theFrontProxyNamesTheUserGroupsAndExtra() throws Exception {
        RequestHeaderAuth auth = auth(configMap("[\"front-proxy-client\"]"));
        var result = auth.authenticate(
                chain(frontProxy.client("front-proxy-client")),
                headers(
                        "X-Remote-User", "alice",
                        "X-Remote-Group", "devs",
                        "X-Remote-Group", "system:authenticated",
                        "X-Remote-Extra-Scopes", "read",
                        "x-remote-extra-Acme.com%2FProject", "p1"));
        assertThat(result).isInstanceOf(RequestHeaderAuth.Result.Authenticated.class);
        UserInfo user = ((RequestHeaderAuth.Result.Authenticated) result).user();
        assertThat(user.getUsername()).isEqualTo("alice");
        assertThat(user.getGroups()).containsExactly("devs", "system:authenticated");
        assertThat(user.getExtra())
                .containsEntry("scopes", List.of("read"))
                .containsEntry("acme.com/project", List.of("p1"));
    }

    @Test
    void noCertificateMeansTheHeadersAreNotRead() throws Exception {
        var result = auth(configMap("[]")).authenticate(null, headers("X-Remote-User", "system:admin"));
        assertThat(result)
                .isInstanceOfSatisfying(
                        RequestHeaderAuth.Result.Refused.class,
                        r -> assertThat(r.status()).isEqualTo(401));
    }

    @Test
    void aCertificateOfAnotherCaIsRefusedWhateverItsName() throws Exception {
        var result = auth(configMap("[]"))
                .authenticate(chain(impostor.client("front-proxy-client")), headers("X-Remote-User", "system:admin"));
        assertThat(result).isInstanceOfSatisfying(RequestHeaderAuth.Result.Refused.class, r -> {
            assertThat(r.status()).isEqualTo(401);
            assertThat(r.message()).contains("not signed by the request-header CA");
        });
    }

    @Test
    void aCommonNameNotAllowedIsRefused() throws Exception {
        var result = auth(configMap("[\"front-proxy-client\"]"))
                .authenticate(chain(frontProxy.client("someone-else")), headers("X-Remote-User", "system:admin"));
        assertThat(result)
                .isInstanceOfSatisfying(
                        RequestHeaderAuth.Result.Refused.class,
                        r -> assertThat(r.message()).contains("someone-else"));
    }

    @Test
    void anEmptyAllowListTakesAnyNameTheCaSigned() throws Exception {
        var result = auth(configMap("[]"))
                .authenticate(chain(frontProxy.client("anything")), headers("X-Remote-User", "alice"));
        assertThat(result).isInstanceOf(RequestHeaderAuth.Result.Authenticated.class);
    }

    @Test
    void noUserHeaderIsUnauthenticated() throws Exception {
        var result = auth(configMap("[]")).authenticate(chain(frontProxy.client("p")), headers("X-Remote-Group", "g"));
        assertThat(result).isInstanceOf(RequestHeaderAuth.Result.Refused.class);
    }

    @Test
    void headerCountsAndSizesAreBounded() throws Exception {
        RequestHeaderAuth auth = auth(configMap("[]"));
        List<String> many = new ArrayList<>();
        for (int i = 0; i <= RequestHeaderAuth.MAX_GROUPS; i++) {
            many.add("X-Remote-Group");
            many.add("g" + i);
        }
        many.addAll(List.of("X-Remote-User", "alice"));
        assertThat(auth.authenticate(chain(frontProxy.client("p")), headers(many.toArray(String[]::new))))
                .isInstanceOfSatisfying(
                        RequestHeaderAuth.Result.Refused.class,
                        r -> assertThat(r.status()).isEqualTo(400));
        assertThat(auth.authenticate(
                        chain(frontProxy.client("p")),
                        headers("X-Remote-User", "a".repeat(RequestHeaderAuth.MAX_VALUE + 1))))
                .isInstanceOf(RequestHeaderAuth.Result.Refused.class);
        List<String> keys = new ArrayList<>(List.of("X-Remote-User", "alice"));
        for (int i = 0; i <= RequestHeaderAuth.MAX_EXTRA_KEYS; i++) {
            keys.add("X-Remote-Extra-k" + i);
            keys.add("v");
        }
        assertThat(auth.authenticate(chain(frontProxy.client("p")), headers(keys.toArray(String[]::new))))
                .isInstanceOf(RequestHeaderAuth.Result.Refused.class);
    }

    @Test
    void theConfigMapIsReadAgainAfterAMinuteSoARotatedCaCounts() throws Exception {
        AtomicReference<Map<String, String>> data = new AtomicReference<>(configMap("[]"));
        RequestHeaderAuth auth = new RequestHeaderAuth(
                () -> {
                    reads.incrementAndGet();
                    return Optional.of(RequestHeaderAuth.Settings.of(data.get()));
                },
                now::get);
        X509Certificate[] rotated = chain(impostor.client("p"));
        assertThat(auth.authenticate(rotated, headers("X-Remote-User", "a")))
                .isInstanceOf(RequestHeaderAuth.Result.Refused.class);
        data.set(Map.of(
                "requestheader-client-ca-file",
                impostor.caPem(),
                "requestheader-username-headers",
                "[\"X-Remote-User\"]"));
        assertThat(auth.authenticate(rotated, headers("X-Remote-User", "a")))
                .isInstanceOf(RequestHeaderAuth.Result.Refused.class);
        now.set(now.get().plus(RequestHeaderAuth.REFRESH).plus(Duration.ofSeconds(1)));
        assertThat(auth.authenticate(rotated, headers("X-Remote-User", "a")))
                .isInstanceOf(RequestHeaderAuth.Result.Authenticated.class);
        assertThat(reads).hasValue(2);
    }

    @Test
    void noCaKnownRefusesEveryone() throws Exception {
        var result = auth(Map.of("requestheader-username-headers", "[\"X-Remote-User\"]"))
                .authenticate(chain(frontProxy.client("p")), headers("X-Remote-User", "alice"));
        assertThat(result).isInstanceOf(RequestHeaderAuth.Result.Refused.class);
    }

    @Test
    void aChainThroughACaNotForClientAuthenticationIsRefused() throws Exception {
        RequestHeaderAuth auth = auth(configMap("[]"));
        TestCertificates serversOnly = frontProxy.intermediate("servers-ca", KeyPurposeId.id_kp_serverAuth);
        TestCertificates.Issued leaf = serversOnly.client("front-proxy-client");
        var result = auth.authenticate(
                new X509Certificate[] {leaf.certificate(), serversOnly.ca.certificate()},
                headers("X-Remote-User", "system:admin"));
        assertThat(result).isInstanceOf(RequestHeaderAuth.Result.Refused.class);
        assertThat(((RequestHeaderAuth.Result.Refused) result).message()).contains("client authentication");
        // the same chain through an intermediate for client authentication counts
        TestCertificates clients = frontProxy.intermediate("clients-ca", KeyPurposeId.id_kp_clientAuth);
        assertThat(auth.authenticate(
                        new X509Certificate[] {
                            clients.client("front-proxy-client").certificate(), clients.ca.certificate()
                        },
                        headers("X-Remote-User", "alice")))
                .isInstanceOf(RequestHeaderAuth.Result.Authenticated.class);
    }

    @Test
    void ofSeveralCommonNamesTheLastCountsAsKubernetesReadsIt() throws Exception {
        RequestHeaderAuth auth = auth(configMap("[\"front-proxy-client\"]"));
        // an allowed name first and another last: Kubernetes sees the other
        var smuggled = auth.authenticate(
                chain(frontProxy.client(new X500Name("CN=front-proxy-client,CN=someone-else"))),
                headers("X-Remote-User", "system:admin"));
        assertThat(smuggled).isInstanceOf(RequestHeaderAuth.Result.Refused.class);
        assertThat(((RequestHeaderAuth.Result.Refused) smuggled).message()).contains("someone-else");
        assertThat(auth.authenticate(
                        chain(frontProxy.client(new X500Name("CN=someone-else,CN=front-proxy-client"))),
                        headers("X-Remote-User", "alice")))
                .isInstanceOf(RequestHeaderAuth.Result.Authenticated.class);
    }

    @Test
    void anExtraKeyIsLowercasedBeforeItIsDecoded() throws Exception {
        var result = auth(configMap("[]"))
                .authenticate(
                        chain(frontProxy.client("front-proxy-client")),
                        headers("X-Remote-User", "alice", "X-Remote-Extra-Acme.com%2FProject%41Id", "p1"));
        assertThat(((RequestHeaderAuth.Result.Authenticated) result).user().getExtra())
                .containsOnlyKeys("acme.com/projectAid");
    }

    @Test
    void theUidHeaderNamesTheUid() throws Exception {
        Map<String, String> data = new LinkedHashMap<>(configMap("[]"));
        data.put("requestheader-uid-headers", "[\"X-Remote-Uid\"]");
        var result = auth(data)
                .authenticate(
                        chain(frontProxy.client("front-proxy-client")),
                        headers("X-Remote-User", "alice", "x-remote-uid", "1234-abcd"));
        assertThat(((RequestHeaderAuth.Result.Authenticated) result).user().getUid())
                .isEqualTo("1234-abcd");
        // before Kubernetes 1.32 the ConfigMap names no uid header, and a uid header is not read
        var old = auth(configMap("[]"))
                .authenticate(
                        chain(frontProxy.client("front-proxy-client")),
                        headers("X-Remote-User", "alice", "X-Remote-Uid", "1234-abcd"));
        assertThat(((RequestHeaderAuth.Result.Authenticated) old).user().getUid())
                .isNull();
    }
}
