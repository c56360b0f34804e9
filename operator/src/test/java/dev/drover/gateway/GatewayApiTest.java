package dev.drover.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.Task;
import dev.drover.execstream.FakeExecAgent;
import dev.drover.httpapi.AgentClient;
import dev.drover.httpapi.KubernetesAuth;
import dev.drover.web.ClientSocket;
import dev.drover.web.MessageReceiver;
import dev.drover.web.Slowloris;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The gateway over HTTPS, as the API server calls it: who may ask what, the Status answers, the task default and a
 * followed log streamed as it comes. The agents behind it are a fake {@link GatewayApi.Backend}.
 */
class GatewayApiTest {

    static final String LOG = "/apis/agent.drover.dev/v1alpha1/namespaces/team-a/allocations/";

    final TestCertificates frontProxy = new TestCertificates("front-proxy-ca");
    final List<String> asked = new CopyOnWriteArrayList<>();
    final CountDownLatch release = new CountDownLatch(1);
    /** Counted down when the gateway closes the quiet task's followed log (team-a/quiet). */
    final CountDownLatch quietClosed = new CountDownLatch(1);

    GatewayApi api;

    @TempDir
    Path dir;

    GatewayApiTest() throws Exception {}

    /**
     * team-a/one has task web; team-a/two has web and db; team-a/gone's node has no agent; team-a/quiet's log is
     * quiet after its first line until the gateway closes it; reading team-a/broken fails inside the gateway.
     */
    final GatewayApi.Backend backend = new GatewayApi.Backend() {
        @Override
        public Optional<Allocation> allocation(String namespace, String name) {
            return switch (name) {
                case "one" -> Optional.of(allocationOn("node-1", "web"));
                case "two" -> Optional.of(allocationOn("node-1", "web", "db"));
                case "gone" -> Optional.of(allocationOn("node-9", "web"));
                case "quiet" -> Optional.of(allocationOn("node-1", "web"));
                case "broken" -> throw new IllegalStateException("connection pool of https://10.0.0.1:6443 exhausted");
                default -> Optional.empty();
            };
        }

        @Override
        public void ask(
                String node, String method, String pathAndQuery, String user, AgentClient.BodyReader<Void> reader)
                throws AgentClient.AgentException, IOException, InterruptedException {
            asked.add(node + " " + (method.equals("GET") ? "" : method + " ") + pathAndQuery + " for " + user);
            if (node.equals("node-9")) {
                throw new AgentClient.AgentException("cannot reach the agent of node node-9", 0);
            }
            if (pathAndQuery.contains("/signal?task=db&")) {
                throw new AgentClient.AgentException("task db of allocation team-a/two is not running (Dead)", 409);
            }
            if (pathAndQuery.contains("/signal?")) {
                reader.read(new java.io.ByteArrayInputStream(
                        "{\"task\":\"web\",\"signal\":\"SIGUSR1\"}".getBytes(StandardCharsets.UTF_8)));
                return;
            }
            boolean follow = pathAndQuery.contains("follow=true");
            boolean quiet = pathAndQuery.contains("/quiet/");
            InputStream body = new InputStream() {
                final byte[] first = "line 1\n".getBytes(StandardCharsets.UTF_8);
                int at;

                @Override
                public int read() throws IOException {
                    byte[] one = new byte[1];
                    return read(one, 0, 1) < 0 ? -1 : one[0];
                }

                @Override
                public int read(byte[] b, int off, int len) throws IOException {
                    if (at < first.length) {
                        int n = Math.min(len, first.length - at);
                        System.arraycopy(first, at, b, off, n);
                        at += n;
                        return n;
                    }
                    if (!follow) {
                        return -1;
                    }
                    if (quiet) {
                        try {
                            quietClosed.await(30, TimeUnit.SECONDS);
                        } catch (InterruptedException e) {
                            throw new IOException(e);
                        }
                        throw new IOException("closed");
                    }
                    try {
                        // a follow goes on until the test has seen the first line; a gateway that held the
                        // line back until the answer ends would get a broken answer instead
                        if (!release.await(10, TimeUnit.SECONDS)) {
                            throw new IOException("the first line was not passed on while the log was followed");
                        }
                    } catch (InterruptedException e) {
                        throw new IOException(e);
                    }
                    return -1;
                }

                @Override
                public void close() {
                    if (quiet) {
                        quietClosed.countDown();
                    }
                }
            };
            reader.read(body);
        }

        @Override
        public ClientSocket exec(
                String node, String pathAndQuery, String user, List<String> protocols, MessageReceiver receiver)
                throws AgentClient.AgentException {
            asked.add(node + " exec " + pathAndQuery + " for " + user);
            if (pathAndQuery.contains("command=explode")) {
                throw new IllegalStateException("secret internals of the agent client");
            }
            if (node.equals("node-9")) {
                throw new AgentClient.AgentException("cannot reach the agent of node node-9", 0);
            }
            try {
                return agent.open(pathAndQuery, user, protocols, receiver);
            } catch (ClientSocket.Refused e) {
                throw new AgentClient.AgentException(e.body(), e.status());
            } catch (Exception e) {
                throw new AgentClient.AgentException(e.toString(), 0);
            }
        }
    };

    FakeExecAgent agent;

    static Allocation allocationOn(String node, String... tasks) {
        Allocation a = new Allocation();
        AllocationSpec spec = new AllocationSpec();
        spec.setNodeName(node);
        spec.setTasks(java.util.Arrays.stream(tasks)
                .map(t -> {
                    Task task = new Task();
                    task.setName(t);
                    return task;
                })
                .toList());
        a.setSpec(spec);
        return a;
    }

    @BeforeEach
    void start() throws Exception {
        agent = new FakeExecAgent(dir);
        api = start(GatewayApi.MAX_REQUESTS);
    }

    GatewayApi start(int maxRequests) throws Exception {
        Map<String, String> config = Map.of(
                "requestheader-client-ca-file", frontProxy.caPem(),
                "requestheader-allowed-names", "[\"front-proxy-client\"]",
                "requestheader-username-headers", "[\"X-Remote-User\"]",
                "requestheader-group-headers", "[\"X-Remote-Group\"]");
        RequestHeaderAuth auth =
                new RequestHeaderAuth(() -> Optional.of(RequestHeaderAuth.Settings.of(config)), Instant::now);
        TestCertificates serving = new TestCertificates("gateway");
        TestCertificates.write(serving.server("localhost"), dir);
        GatewayApi.Authorizer rbac =
                // alice may do anything; reader may only read (get)
                (user, namespace, name, verb, subresource) -> user.getUsername().equals("alice")
                                || (user.getUsername().equals("reader") && verb.equals("get"))
                        ? new KubernetesAuth.Decision.Allowed(
                                new KubernetesAuth.Caller(user.getUsername(), List.of(), null))
                        : new KubernetesAuth.Decision.Refused(
                                403,
                                "user \"" + user.getUsername() + "\" cannot " + verb + " allocations/" + subresource);
        return GatewayApi.start(
                new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                GatewayTls.serving(dir.resolve("tls.crt"), dir.resolve("tls.key"), auth),
                auth,
                rbac,
                backend,
                maxRequests);
    }

    @AfterEach
    void stop() {
        release.countDown();
        api.close();
        agent.close();
    }

    HttpResponse<InputStream> get(TestCertificates.Issued as, String user, String path) throws Exception {
        return get(as, user, api.port(), path, Duration.ofSeconds(10));
    }

    HttpResponse<InputStream> get(TestCertificates.Issued as, String user, int port, String path, Duration timeout)
            throws Exception {
        // not closed: closing waits for the bodies a test has not read
        HttpClient http = HttpClient.newBuilder()
                .sslContext(TestCertificates.clientTls(as))
                .build();
        {
            HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("https://localhost:" + port + path))
                    .timeout(timeout);
            if (user != null) {
                request.header("X-Remote-User", user);
            }
            return http.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
        }
    }

    HttpResponse<InputStream> asAlice(String path) throws Exception {
        return get(frontProxy.client("front-proxy-client"), "alice", path);
    }

    static JsonNode status(HttpResponse<InputStream> r) throws IOException {
        try (InputStream in = r.body()) {
            JsonNode s = GatewayStatus.JSON.readTree(in);
            assertThat(s.path("kind").asText()).isEqualTo("Status");
            assertThat(s.path("code").asInt()).isEqualTo(r.statusCode());
            assertThat(s.path("reason").asText()).isEqualTo(GatewayStatus.reason(r.statusCode()));
            return s;
        }
    }

    static String text(HttpResponse<InputStream> r) throws IOException {
        try (InputStream in = r.body()) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void healthNeedsNoCertificate() throws Exception {
        HttpResponse<InputStream> r = get(null, null, "/readyz");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(text(r)).isEqualTo("ok");
    }

    /**
     * 2 000 connections that begin a TLS handshake and stall (a header line every 8 s did the same): the gateway held
     * 1 024 connections at most, so they took them all and every user's request waited in the backlog.
     */
    @Test
    void aSlowlorisCannotStarveAuthorizedLogs() throws Exception {
        try (Slowloris attack = Slowloris.open(api.port(), 2000, Duration.ofSeconds(2))) {
            assertThat(attack.opened()).as("connections the gateway took").isEqualTo(2000);
            long start = System.nanoTime();
            HttpResponse<InputStream> r =
                    get(frontProxy.client("front-proxy-client"), "alice", api.port(), LOG + "one/log", SECONDS_2);
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(text(r)).isEqualTo("line 1\n");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(SECONDS_2);
            HttpResponse<InputStream> probe = get(null, null, api.probePort(), "/livez", SECONDS_2);
            assertThat(probe.statusCode()).isEqualTo(200);
        }
    }

    static final Duration SECONDS_2 = Duration.ofSeconds(2);

    /**
     * The API server's connection is known by its front-proxy certificate from the handshake: a flood past the
     * untrusted pool before its first request closes the flood's connections, not the API server's.
     */
    @Test
    void theApiServersConnectionOutlivesAFloodBeforeItsFirstRequest() throws Exception {
        // ready: the request-header CA has been read, as before a real API server sends anything
        assertThat(get(null, null, api.probePort(), "/readyz", SECONDS_2).statusCode())
                .isEqualTo(200);
        try (SSLSocket front = (SSLSocket) TestCertificates.clientTls(frontProxy.client("front-proxy-client"))
                .getSocketFactory()
                .createSocket("localhost", api.port())) {
            front.setSoTimeout(10_000);
            front.startHandshake();
            // the client ends its handshake before the server has read its certificate: wait for the server
            await().atMost(Duration.ofSeconds(5)).until(() -> api.untrustedConnections() == 0);
            int flood = GatewayApi.CONNECTIONS.maxUntrusted() + 20; // few: the head deadline (10 s) runs meanwhile
            try (Slowloris attack = Slowloris.open(api.port(), flood, SECONDS_2)) {
                await().atMost(Duration.ofSeconds(5)).until(() -> attack.countClosedByServer() >= 20);
                front.getOutputStream()
                        .write(("GET " + LOG + "one/log HTTP/1.1\r\nHost: localhost\r\nX-Remote-User: alice\r\n"
                                        + "Connection: close\r\n\r\n")
                                .getBytes(StandardCharsets.US_ASCII));
                front.getOutputStream().flush();
                String answer = new String(front.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
                assertThat(answer).startsWith("HTTP/1.1 200").contains("line 1\n");
            }
        }
    }

    @Test
    void theHealthChecksAlsoHaveAPortOfTheirOwnAndOnlyThey() throws Exception {
        assertThat(text(get(null, null, api.probePort(), "/readyz", SECONDS_2))).isEqualTo("ok");
        HttpResponse<InputStream> other =
                get(frontProxy.client("front-proxy-client"), "alice", api.probePort(), LOG + "one/log", SECONDS_2);
        assertThat(other.statusCode()).isEqualTo(404);
        assertThat(asked).isEmpty();
    }

    @Test
    void headersWithoutTheFrontProxyCertificateAreUnauthorized() throws Exception {
        HttpResponse<InputStream> none = get(null, "alice", LOG + "one/log");
        assertThat(none.statusCode()).isEqualTo(401);
        status(none);
        HttpResponse<InputStream> other =
                get(new TestCertificates("front-proxy-ca").client("front-proxy-client"), "alice", LOG + "one/log");
        assertThat(other.statusCode()).isEqualTo(401);
        status(other);
        assertThat(asked).isEmpty();
    }

    @Test
    void discoveryNamesTheSubresources() throws Exception {
        HttpResponse<InputStream> r = asAlice("/apis/agent.drover.dev/v1alpha1");
        assertThat(r.statusCode()).isEqualTo(200);
        JsonNode list = GatewayStatus.JSON.readTree(text(r));
        assertThat(list.path("kind").asText()).isEqualTo("APIResourceList");
        assertThat(list.findValuesAsText("name"))
                .containsExactly(
                        "allocations/log",
                        "allocations/stats",
                        "allocations/snapshot",
                        "allocations/signal",
                        "allocations/exec");
        for (JsonNode resource : list.path("resources")) {
            assertThat(resource.path("verbs").get(0).asText())
                    .isEqualTo(resource.path("name").asText().matches("allocations/(signal|exec)") ? "create" : "get");
        }
        assertThat(GatewayStatus.JSON
                        .readTree(text(asAlice("/apis/agent.drover.dev")))
                        .path("kind")
                        .asText())
                .isEqualTo("APIGroup");
    }

    @Test
    void theOnlyTaskIsTheDefaultAndTheAgentIsAskedForTheUser() throws Exception {
        HttpResponse<InputStream> r = asAlice(LOG + "one/log");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(text(r)).isEqualTo("line 1\n");
        assertThat(asked)
                .containsExactly(
                        "node-1 /v1/allocations/team-a/one/logs/web?stream=stdout&tail=-1&follow=false for alice");
    }

    @Test
    void twoTasksAndNoneNamedIsABadRequestNamingThem() throws Exception {
        HttpResponse<InputStream> r = asAlice(LOG + "two/log");
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(status(r).path("message").asText()).contains("web, db").contains("?task=");
        assertThat(asked).isEmpty();
    }

    @Test
    void aBadQueryIsABadRequest() throws Exception {
        HttpResponse<InputStream> r = asAlice(LOG + "one/log?stream=%0Aevil");
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(status(r).path("message").asText()).contains("stream").doesNotContain("\n");
        assertThat(asAlice(LOG + "one/log?tail=lots").statusCode()).isEqualTo(400);
        assertThat(asAlice(LOG + "one/log?task=Not_A_Task").statusCode()).isEqualTo(400);
        assertThat(asked).isEmpty();
    }

    @Test
    void aUserWithoutTheRightIsForbiddenAndNoAgentIsAsked() throws Exception {
        HttpResponse<InputStream> r = get(frontProxy.client("front-proxy-client"), "mallory", LOG + "one/stats");
        assertThat(r.statusCode()).isEqualTo(403);
        assertThat(status(r).path("message").asText()).contains("mallory");
        assertThat(asked).isEmpty();
    }

    @Test
    void missingAllocationsTasksAndAgentsAreStatuses() throws Exception {
        HttpResponse<InputStream> missing = asAlice(LOG + "nothing/stats");
        assertThat(missing.statusCode()).isEqualTo(404);
        status(missing);
        HttpResponse<InputStream> task = asAlice(LOG + "two/log?task=cache");
        assertThat(task.statusCode()).isEqualTo(404);
        assertThat(status(task).path("message").asText()).contains("cache");
        HttpResponse<InputStream> gone = asAlice(LOG + "gone/stats");
        assertThat(gone.statusCode()).isEqualTo(503);
        assertThat(status(gone).path("message").asText()).contains("node-9");
        HttpResponse<InputStream> post = HttpClient.newBuilder()
                .sslContext(TestCertificates.clientTls(frontProxy.client("front-proxy-client")))
                .build()
                .send(
                        HttpRequest.newBuilder(URI.create("https://localhost:" + api.port() + LOG + "one/log"))
                                .header("X-Remote-User", "alice")
                                .POST(HttpRequest.BodyPublishers.noBody())
                                .build(),
                        HttpResponse.BodyHandlers.ofInputStream());
        assertThat(post.statusCode()).isEqualTo(405);
        status(post);
    }

    HttpResponse<InputStream> post(String user, String path) throws Exception {
        return HttpClient.newBuilder()
                .sslContext(TestCertificates.clientTls(frontProxy.client("front-proxy-client")))
                .build()
                .send(
                        HttpRequest.newBuilder(URI.create("https://localhost:" + api.port() + path))
                                .header("X-Remote-User", user)
                                .POST(HttpRequest.BodyPublishers.noBody())
                                .build(),
                        HttpResponse.BodyHandlers.ofInputStream());
    }

    ClientSocket exec(String user, String pathAndQuery, dev.drover.execstream.ExecTranscript transcript)
            throws Exception {
        HttpClient http = HttpClient.newBuilder()
                .sslContext(TestCertificates.clientTls(frontProxy.client("front-proxy-client")))
                .build();
        return ClientSocket.openOwning(
                http,
                URI.create("wss://localhost:" + api.port() + pathAndQuery),
                Map.of("X-Remote-User", user),
                dev.drover.execstream.Channels.PROTOCOLS,
                transcript,
                Duration.ofSeconds(10));
    }

    @Test
    void anExecIsRelayedToTheAgentForTheUserWithItsInputAndExit() throws Exception {
        var cat = new dev.drover.execstream.ExecTranscript();
        ClientSocket s = exec("alice", LOG + "one/exec?command=cat&task=web&stdin=true&container=x", cat);
        assertThat(s.protocol()).isEqualTo(dev.drover.execstream.Channels.V5);
        s.send(dev.drover.execstream.ExecTranscript.stdin("round trip\n"));
        s.send(dev.drover.execstream.Channels.close(dev.drover.execstream.Channels.STDIN));
        assertThat(cat.channel(dev.drover.execstream.Channels.STDOUT)).isEqualTo("round trip\n");
        assertThat(cat.outcome().code()).isZero();

        assertThat(asked)
                .containsExactly(
                        "node-1 exec /v1/allocations/team-a/one/exec?task=web&command=cat&stdin=true for alice");
        var three = new dev.drover.execstream.ExecTranscript();
        exec("alice", LOG + "two/exec?task=web&command=sh&command=-c&command=exit%203", three);
        assertThat(three.channel(dev.drover.execstream.Channels.STDERR)).isEqualTo("bye\n");
        assertThat(three.outcome().code()).isEqualTo(3);
        assertThat(agent.opened)
                .containsExactly(
                        "/v1/allocations/team-a/one/exec?task=web&command=cat&stdin=true by alice",
                        "/v1/allocations/team-a/two/exec?task=web&command=sh&command=-c&command=exit+3 by alice");
    }

    @Test
    void anExecIsRefusedWithAStatusBeforeTheUpgrade() throws Exception {
        for (String[] refused : new String[][] {
            {"reader", "one/exec?task=web&command=cat", "403", "cannot create allocations/exec"},
            {"alice", "one/exec?task=cache&command=cat", "404", "has no task"},
            {"alice", "one/exec?task=web", "400", "names its command"},
            {"alice", "gone/exec?task=web&command=cat", "503", "cannot reach the agent of node node-9"},
            {"alice", "two/exec?task=db&command=cat", "409", "task db is not running"},
        }) {
            assertThatThrownBy(() -> exec(refused[0], LOG + refused[1], new dev.drover.execstream.ExecTranscript()))
                    .as(refused[1])
                    .isInstanceOfSatisfying(ClientSocket.Refused.class, r -> {
                        assertThat(r.status()).isEqualTo(Integer.parseInt(refused[2]));
                        assertThat(r.body()).contains(refused[3]).contains("\"kind\":\"Status\"");
                    });
        }
        HttpResponse<InputStream> plain = asAlice(LOG + "one/exec?task=web&command=cat");
        assertThat(plain.statusCode()).isEqualTo(400);
        assertThat(status(plain).path("message").asText()).contains("WebSocket upgrade");
        assertThat(agent.processes).isEmpty();
        assertThat(asked).noneMatch(a -> a.contains("/one/"));
    }

    @Test
    void everyExecSessionGivesItsPermitBackHoweverItEnds() throws Exception {
        var cat = new dev.drover.execstream.ExecTranscript();
        ClientSocket s = exec("alice", LOG + "one/exec?command=cat&task=web&stdin=true", cat);
        s.send(dev.drover.execstream.Channels.close(dev.drover.execstream.Channels.STDIN));
        assertThat(cat.outcome().code()).isZero();
        assertThatThrownBy(() ->
                        exec("alice", LOG + "two/exec?task=db&command=cat", new dev.drover.execstream.ExecTranscript()))
                .isInstanceOfSatisfying(
                        ClientSocket.Refused.class, r -> assertThat(r.status()).isEqualTo(409));
        for (int i = 0; i < 3; i++) {
            assertThatThrownBy(() -> exec(
                            "alice",
                            LOG + "one/exec?task=web&command=explode",
                            new dev.drover.execstream.ExecTranscript()))
                    .isInstanceOfSatisfying(ClientSocket.Refused.class, r -> {
                        assertThat(r.status()).isEqualTo(500);
                        assertThat(r.body())
                                .contains("\"kind\":\"Status\"", "its log says why")
                                .doesNotContain("secret", "IllegalStateException");
                    });
        }
        org.awaitility.Awaitility.await()
                .atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(api.execSessionsFree()).isEqualTo(GatewayExec.MAX_SESSIONS));
    }

    @Test
    void oneUserCannotTakeEveryExecSession() throws Exception {
        List<ClientSocket> open = new java.util.ArrayList<>();
        try {
            for (int i = 0; i < GatewayExec.MAX_SESSIONS_PER_USER; i++) {
                open.add(exec(
                        "alice",
                        LOG + "one/exec?task=web&command=cat&stdin=true",
                        new dev.drover.execstream.ExecTranscript()));
            }
            assertThatThrownBy(() -> exec(
                            "alice", LOG + "one/exec?task=web&command=cat", new dev.drover.execstream.ExecTranscript()))
                    .isInstanceOfSatisfying(ClientSocket.Refused.class, r -> {
                        assertThat(r.status()).isEqualTo(429);
                        assertThat(r.body())
                                .contains(
                                        "user alice has " + GatewayExec.MAX_SESSIONS_PER_USER + " exec sessions open");
                    });
            open.removeFirst().close(null);
            org.awaitility.Awaitility.await()
                    .atMost(Duration.ofSeconds(10))
                    .until(() ->
                            api.execSessionsFree() == GatewayExec.MAX_SESSIONS - GatewayExec.MAX_SESSIONS_PER_USER + 1);
            open.add(exec(
                    "alice",
                    LOG + "one/exec?task=web&command=cat&stdin=true",
                    new dev.drover.execstream.ExecTranscript()));
        } finally {
            open.forEach(s -> s.close(null));
        }
        org.awaitility.Awaitility.await()
                .atMost(Duration.ofSeconds(20))
                .until(() -> api.execSessionsFree() == GatewayExec.MAX_SESSIONS);
    }

    @Test
    void aSignalIsPostedToTheAgentForTheUserWithItsNameMadeCanonical() throws Exception {
        HttpResponse<InputStream> r = post("alice", LOG + "two/signal?task=web&signal=usr1");

        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(text(r)).contains("SIGUSR1");
        assertThat(asked)
                .containsExactly("node-1 POST /v1/allocations/team-a/two/signal?task=web&signal=SIGUSR1 for alice");
    }

    @Test
    void aReaderCannotSignalAndBadSignalsNeverReachTheAgent() throws Exception {
        HttpResponse<InputStream> reader = post("reader", LOG + "two/signal?task=web&signal=HUP");
        assertThat(reader.statusCode()).isEqualTo(403);
        assertThat(status(reader).path("message").asText()).contains("cannot create allocations/signal");
        assertThat(get(frontProxy.client("front-proxy-client"), "reader", LOG + "two/stats")
                        .statusCode())
                .as("a reader reads")
                .isEqualTo(200);
        asked.clear();
        assertThat(asAlice(LOG + "two/signal?task=web&signal=HUP").statusCode())
                .as("a signal is a POST")
                .isEqualTo(405);
        HttpResponse<InputStream> unknown = post("alice", LOG + "two/signal?task=web&signal=SIGFOO%0A");
        assertThat(unknown.statusCode()).isEqualTo(400);
        assertThat(status(unknown).path("message").asText())
                .contains("unknown signal")
                .doesNotContain("\n");
        assertThat(post("alice", LOG + "two/signal?signal=HUP").statusCode()).isEqualTo(400);
        assertThat(post("alice", LOG + "two/signal?task=Bad_Task&signal=HUP").statusCode())
                .isEqualTo(400);
        assertThat(asked).isEmpty();
    }

    @Test
    void aTaskThatIsNotRunningIsAConflictWithTheAgentsReason() throws Exception {
        HttpResponse<InputStream> r = post("alice", LOG + "two/signal?task=db&signal=HUP");

        assertThat(r.statusCode()).isEqualTo(409);
        assertThat(status(r).path("message").asText()).contains("task db of allocation team-a/two is not running");
    }

    @Test
    void aFollowedLogIsStreamedAsItComes() throws Exception {
        HttpResponse<InputStream> r = asAlice(LOG + "two/log?task=web&follow=true&tail=5");
        assertThat(r.statusCode()).isEqualTo(200);
        try (InputStream body = r.body()) {
            byte[] first = body.readNBytes("line 1\n".length());
            // the agent's answer has not ended: the first line came through on its own
            assertThat(new String(first, StandardCharsets.UTF_8)).isEqualTo("line 1\n");
            release.countDown();
            assertThat(body.read()).isEqualTo(-1);
        }
        assertThat(asked)
                .containsExactly(
                        "node-1 /v1/allocations/team-a/two/logs/web?stream=stdout&tail=5&follow=true for alice");
    }

    @Test
    void aFailureInsideTheGatewayTellsTheUserNoInternals() throws Exception {
        HttpResponse<InputStream> r = asAlice(LOG + "broken/stats");
        assertThat(r.statusCode()).isEqualTo(500);
        assertThat(status(r).path("message").asText())
                .isEqualTo("the gateway failed to answer; its log says why")
                .doesNotContain("IllegalStateException")
                .doesNotContain("10.0.0.1");
    }

    @Test
    void aClientThatHangsUpOnAQuietFollowedLogLetsTheAgentGo() throws Exception {
        try (SSLSocket socket = (SSLSocket) TestCertificates.clientTls(frontProxy.client("front-proxy-client"))
                .getSocketFactory()
                .createSocket("localhost", api.port())) {
            socket.getOutputStream()
                    .write(("GET " + LOG + "quiet/log?follow=true HTTP/1.1\r\nHost: localhost\r\n"
                                    + "X-Remote-User: alice\r\n\r\n")
                            .getBytes(StandardCharsets.US_ASCII));
            socket.getOutputStream().flush();
            StringBuilder seen = new StringBuilder();
            InputStream in = socket.getInputStream();
            while (!seen.toString().contains("line 1")) {
                int b = in.read();
                assertThat(b).as("the answer so far: %s", seen).isNotNegative();
                seen.append((char) b);
            }
            assertThat(seen.toString()).startsWith("HTTP/1.1 200");
        }
        // the task writes nothing more, so no write fails: the gateway must notice the hang-up on its own
        assertThat(quietClosed.await(4 * GatewayApi.PEER_CHECK.toSeconds(), TimeUnit.SECONDS))
                .as("the agent's answer was closed after the client hung up")
                .isTrue();
    }

    @Test
    void requestsBeyondTheCapAreAnswered503AndHealthChecksStillPass() throws Exception {
        api.close();
        api = start(1);
        HttpResponse<InputStream> follow = asAlice(LOG + "one/log?follow=true");
        assertThat(follow.statusCode()).isEqualTo(200);
        try (InputStream body = follow.body()) {
            assertThat(new String(body.readNBytes("line 1\n".length()), StandardCharsets.UTF_8))
                    .isEqualTo("line 1\n");
            HttpResponse<InputStream> busy = asAlice(LOG + "one/stats");
            assertThat(busy.statusCode()).isEqualTo(503);
            assertThat(busy.headers().firstValue("Retry-After")).contains("1");
            status(busy);
            assertThat(get(null, null, "/livez").statusCode()).isEqualTo(200);
            release.countDown();
            assertThat(body.read()).isEqualTo(-1);
        }
        // the follow's place is free once it has ended
        Instant deadline = Instant.now().plusSeconds(10);
        int code;
        do {
            code = asAlice(LOG + "one/stats").statusCode();
        } while (code == 503 && Instant.now().isBefore(deadline));
        assertThat(code).isEqualTo(200);
    }
}
