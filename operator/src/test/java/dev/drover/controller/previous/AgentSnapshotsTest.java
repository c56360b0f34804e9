package dev.drover.controller.previous;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsExchange;
import com.sun.net.httpserver.HttpsParameters;
import com.sun.net.httpserver.HttpsServer;
import dev.drover.agentapi.AgentProtocol;
import dev.drover.allocwatcher.Claimant;
import dev.drover.allocwatcher.DiskClaimedException;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.httpapi.AgentCertificate;
import dev.drover.state.AllocId;
import dev.drover.testing.MockApi;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.ssl.SSLPeerUnverifiedException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The downloading side of a migration, against an agent of node a that holds the certificate node a publishes but
 * answers as a compromised one might: it must get the peer token and the successor, and what it says must reach the
 * user cut and escaped.
 */
class AgentSnapshotsTest {

    @TempDir
    Path dir;

    MockApi api;
    HttpsServer nodeA;
    final AtomicInteger status = new AtomicInteger(500);
    final AtomicReference<String> answer = new AtomicReference<>("");
    final List<URI> asked = new CopyOnWriteArrayList<>();
    final List<String> tokens = new CopyOnWriteArrayList<>();
    /** The fingerprint of the client certificate each request to node a presented ("none"). */
    final List<String> presented = new CopyOnWriteArrayList<>();
    /** This agent's own certificate (node b's), which it presents when it claims a disk. */
    AgentCertificate.Identity own;

    AgentSnapshots snapshots;
    Path token;
    final Claimant web2 = new Claimant("web-2", "uid-2");
    /** While not counted down, node a's answers stall after their first bytes. */
    volatile CountDownLatch stall = new CountDownLatch(0);

    @BeforeEach
    void start() throws Exception {
        api = new MockApi();
        AgentCertificate.Identity identity = AgentCertificate.loadOrCreate(
                dir.resolve("tls"), "a", List.of(InetAddress.getLoopbackAddress()), Clock.systemUTC());
        nodeA = HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 8);
        nodeA.setHttpsConfigurator(new HttpsConfigurator(identity.sslContext()) {
            @Override
            public void configure(HttpsParameters params) {
                params.setWantClientAuth(true); // as an agent's API asks every client
            }
        });
        nodeA.createContext("/", ex -> {
            try (ex) {
                asked.add(ex.getRequestURI());
                try {
                    byte[] der = ((HttpsExchange) ex)
                            .getSSLSession()
                            .getPeerCertificates()[0]
                            .getEncoded();
                    presented.add(HexFormat.of()
                            .formatHex(MessageDigest.getInstance("SHA-256").digest(der)));
                } catch (SSLPeerUnverifiedException | GeneralSecurityException none) {
                    presented.add("none");
                }
                tokens.add(ex.getRequestHeaders().getFirst("Authorization"));
                byte[] body = answer.get().getBytes(StandardCharsets.UTF_8);
                if (stall.getCount() > 0) { // a refusal whose body begins, then never ends
                    ex.sendResponseHeaders(status.get(), 0);
                    ex.getResponseBody().write(body);
                    ex.getResponseBody().flush();
                    stall.await(30, TimeUnit.SECONDS);
                    return;
                }
                ex.sendResponseHeaders(status.get(), body.length);
                ex.getResponseBody().write(body);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        nodeA.start();
        api.client()
                .nodes()
                .resource(new NodeBuilder()
                        .withNewMetadata()
                        .withName("a")
                        .withAnnotations(Map.of(
                                AgentProtocol.PORT_ANNOTATION,
                                Integer.toString(nodeA.getAddress().getPort()),
                                AgentProtocol.CERTIFICATE_ANNOTATION,
                                identity.fingerprint()))
                        .endMetadata()
                        .withNewStatus()
                        .addNewAddress()
                        .withType("InternalIP")
                        .withAddress("127.0.0.1")
                        .endAddress()
                        .endStatus()
                        .build())
                .create();
        Allocation web1 = new Allocation();
        web1.setMetadata(new ObjectMetaBuilder()
                .withNamespace("default")
                .withName("web-1")
                .build());
        AllocationSpec spec = new AllocationSpec();
        spec.setNodeName("a");
        web1.setSpec(spec);
        api.client().resource(web1).create();
        token = Files.writeString(dir.resolve("peer-token"), "peer.token.of.b\n");
        own = AgentCertificate.loadOrCreate(
                dir.resolve("tls-b"), "b", List.of(InetAddress.getLoopbackAddress()), Clock.systemUTC());
        snapshots = new AgentSnapshots(
                api.client(), "b", new PeerToken(token), Duration.ofSeconds(10), () -> own.clientKeys());
    }

    @AfterEach
    void stop() {
        stall.countDown();
        nodeA.stop(0);
        api.close();
    }

    IOException fetchFails() {
        Path staging = dir.resolve("staging");
        try {
            Files.createDirectories(staging);
            snapshots.fetch(new AllocId("default", "web-1"), web2, staging, Set.of("app"), 1 << 20);
        } catch (IOException e) {
            return e;
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
        throw new AssertionError("the fetch did not fail");
    }

    @Test
    void itAsksWithThePeerTokenForTheSuccessor() {
        answer.set("{\"status\":403,\"message\":\"no\"}");
        status.set(403);
        fetchFails();
        assertThat(tokens).containsExactly("Bearer peer.token.of.b");
        assertThat(presented).as("this agent's own certificate").containsExactly(own.fingerprint());
        assertThat(asked.getFirst().getRawPath()).isEqualTo("/v1/allocations/default/web-1/snapshot");
        assertThat(asked.getFirst().getRawQuery()).isEqualTo("successor=web-2&uid=uid-2");
    }

    @Test
    void aClaimedDiskIsDiskClaimedException() {
        status.set(409);
        answer.set("{\"status\":409,\"message\":\"allocation web-3 claimed the disk of web-1 first\"}");
        assertThat(fetchFails())
                .isInstanceOf(DiskClaimedException.class)
                .hasMessage("the agent of node a says \"allocation web-3 claimed the disk of web-1 first\"");
    }

    @Test
    void whatAnotherAgentSaysIsCutAndEscaped() {
        status.set(500);
        answer.set("{\"status\":500,\"message\":\"\\u001b[2J\\u001b[31mall is well\\n" + "x".repeat(50_000) + "\"}");
        IOException e = fetchFails();
        assertThat(e).isNotInstanceOf(DiskClaimedException.class);
        assertThat(e.getMessage())
                .startsWith("the agent of node a refused: \"\\u001b[2J\\u001b[31mall is well\\u000axxx")
                .doesNotContain("\u001b")
                .doesNotContain("\n")
                .hasSizeLessThan(300);
    }

    /**
     * A peer that begins a refusal and never finishes it: its body was read with no time limit (the request's timeout
     * covers only the wait for the headers), so the successor's migration hung for good.
     */
    @Test
    void aRefusalWhoseBodyStallsIsGivenUpAfterTheTimeout() {
        stall = new CountDownLatch(1);
        status.set(403);
        answer.set("{\"status\":403,\"mess");
        snapshots = new AgentSnapshots(
                api.client(), "b", new PeerToken(token), Duration.ofSeconds(1), () -> own.clientKeys());

        IOException e = assertTimeoutPreemptively(Duration.ofSeconds(15), this::fetchFails);

        assertThat(e).hasMessageContaining("the agent of node a refused").hasMessageContaining("HTTP 403");
    }

    @Test
    void withoutAPeerTokenNothingIsAskedAndTheErrorSaysWhatIsMissing() {
        snapshots = new AgentSnapshots(
                api.client(),
                "b",
                new PeerToken(dir.resolve("no-such-token")),
                Duration.ofSeconds(10),
                () -> own.clientKeys());
        assertThat(fetchFails()).hasMessageContaining("this agent has no peer token");
        assertThat(asked).isEmpty();
    }
}
