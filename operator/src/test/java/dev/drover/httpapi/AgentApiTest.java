package dev.drover.httpapi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.agentapi.AgentProtocol;
import dev.drover.allocwatcher.Claimant;
import dev.drover.allocwatcher.DiskClaims;
import dev.drover.allocwatcher.Snapshots;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.deviceplugin.InstanceStats;
import dev.drover.devices.DeviceStats;
import dev.drover.driver.DriverException;
import dev.drover.driver.ExecProcess;
import dev.drover.driver.ExecRequest;
import dev.drover.driver.TaskNotRunningException;
import dev.drover.driver.TaskStats;
import dev.drover.execstream.Channels;
import dev.drover.execstream.ExecTranscript;
import dev.drover.execstream.FakeExecProcess;
import dev.drover.state.AllocId;
import dev.drover.web.ClientSocket;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalLong;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLSocket;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The API over HTTPS: what callers with and without the right get, a followed log, stats and snapshots. */
class AgentApiTest {

    static final Instant BOOT = Instant.now();
    /**
     * Four followers at most, two per caller, three per namespace; a source may cause 20 reviews at once, then 5 a
     * second.
     */
    static final ApiLimits LIMITS = new ApiLimits(4, 2, 3, 5, 20, Duration.ofSeconds(5));

    /**
     * Allocation team-a/svc: task web runs (half a core, 64 MiB, one GPU), task init is dead, task db's driver
     * fails to answer.
     */
    final class FakeAllocation implements LocalAllocation {
        private final Path logs;

        FakeAllocation(Path logs) {
            this.logs = logs;
        }

        @Override
        public List<String> tasks() {
            return List.of("web", "init", "db");
        }

        @Override
        public boolean dead(String task) {
            return task.equals("init") || webDead.get();
        }

        @Override
        public String state(String task) {
            return task.equals("init") ? "Dead" : "Running";
        }

        @Override
        public Path logsDir() {
            return logs;
        }

        @Override
        public Optional<TaskStats> stats(String task) throws DriverException {
            Instant now = Instant.now();
            return switch (task) {
                case "web" ->
                    Optional.of(new TaskStats(now, Duration.between(BOOT, now).dividedBy(2), 64L << 20));
                case "db" -> throw new DriverException("process 4242 is gone");
                default -> Optional.empty();
            };
        }

        @Override
        public void signal(String task, String signal, String reason) throws DriverException {
            switch (task) {
                case "init" -> throw new TaskNotRunningException("task init is not running (Dead)");
                case "db" -> throw new DriverException("process 4242 is gone");
                default -> signalled.add(task + " " + signal + " " + reason);
            }
        }

        /** Task web runs {@code cat}, or exits with the number its command ends with; the others are not running. */
        @Override
        public ExecProcess exec(String task, ExecRequest request, String reason) throws DriverException {
            if (!task.equals("web")) {
                throw new TaskNotRunningException("task " + task + " is not running (Dead)");
            }
            execs.add(reason + " " + request.command());
            FakeExecProcess p = request.command().getFirst().equals("cat")
                    ? FakeExecProcess.cat()
                    : FakeExecProcess.failing(
                            "bye\n",
                            Integer.parseInt(request.command().getLast().replaceAll("\\D", "")));
            processes.add(p);
            return p;
        }

        @Override
        public DeviceStats.AllocationStats devices() {
            InstanceStats gpu = InstanceStats.builder("GPU-0", BOOT)
                    .gpuUtilPercent(87)
                    .memoryUsedMiB(3000)
                    .memoryTotalMiB(16384)
                    .temperatureC(61)
                    .build();
            return new DeviceStats.AllocationStats(
                    Map.of("web", List.of(gpu)),
                    List.of(new DeviceStats.GroupStats(
                            "nvidia",
                            "gpu",
                            "Tesla T4",
                            List.of("GPU-0"),
                            OptionalDouble.of(87),
                            OptionalLong.of(3000),
                            OptionalLong.of(16384),
                            OptionalDouble.of(61),
                            OptionalDouble.empty())));
        }

        @Override
        public void snapshot(OutputStream out) throws IOException {
            Snapshots.pack(dir.resolve("alloc"), List.of("web"), out);
        }

        @Override
        public void claimDisk(Claimant claimant) throws IOException {
            DiskClaims.claim(dir.resolve("alloc"), claimant);
        }
    }

    @TempDir
    Path dir;

    ReviewingApiServer kube;
    AgentApi api;
    AgentCertificate.Identity identity;
    HttpClient http;
    /** The gateway's CA (its certificate in {@code dir/gateway-ca.crt}) and client certificate. */
    TestCa gatewayCa;

    TestCa.Leaf gatewayCertificate;
    HttpClient gatewayHttp;
    /** The agent of node-b: its certificate, published on its Node, and a client presenting it. */
    AgentCertificate.Identity nodeB;

    HttpClient nodeBHttp;
    final AtomicBoolean webDead = new AtomicBoolean();
    /** What the fake allocation was asked to send: "TASK SIGNAL REASON". */
    final List<String> signalled = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** What the fake allocation was asked to run: "REASON [COMMAND]", and the commands it started. */
    final List<String> execs = new java.util.concurrent.CopyOnWriteArrayList<>();

    final List<FakeExecProcess> processes = new java.util.concurrent.CopyOnWriteArrayList<>();

    @BeforeEach
    void start() throws Exception {
        kube = new ReviewingApiServer();
        Path logs = Files.createDirectories(dir.resolve("logs"));
        Files.writeString(logs.resolve("web.stdout.0"), "one\ntwo\nthree\n");
        Files.writeString(logs.resolve("web.stderr.0"), "oops\n");
        identity = AgentCertificate.loadOrCreate(
                dir.resolve("tls"), "node-a", List.of(InetAddress.getLoopbackAddress()), Clock.systemUTC());
        Files.createDirectories(dir.resolve("alloc/alloc/data"));
        Files.writeString(dir.resolve("alloc/alloc/data/state.txt"), "kept\n");
        Files.createDirectories(dir.resolve("alloc/web/local"));
        Files.writeString(dir.resolve("alloc/web/local/cache.bin"), "warm");
        FakeAllocation svc = new FakeAllocation(logs);
        LocalAllocations allocations = id -> {
            if (id.name().equals("broken")) {
                throw new IllegalStateException("the runner of " + id + " is in a state nobody foresaw");
            }
            return id.equals(new AllocId("team-a", "svc")) || id.equals(new AllocId("team-b", "svc"))
                    ? Optional.of(svc)
                    : Optional.empty();
        };
        gatewayCa = new TestCa("drover-gateway-ca");
        gatewayCa.writePem(dir.resolve("gateway-ca.crt"));
        gatewayCertificate = gatewayCa.sign("drover-gateway", KeyPurposeId.id_kp_clientAuth);
        api = AgentApi.start(
                new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                identity.sslContext(),
                new KubernetesAuth(kube.client, Clock.systemUTC(), LIMITS),
                new GatewayTrust(
                        Optional.of(ReviewingApiServer.GATEWAY), dir.resolve("gateway-ca.crt"), Clock.systemUTC()),
                allocations,
                new Successors(kube.client),
                "node-a",
                Clock.systemUTC(),
                Duration.ofMillis(200),
                LIMITS);
        http = HttpClient.newBuilder()
                .sslContext(Pinning.to(identity.fingerprint()))
                .build();
        gatewayHttp = gatewayClient(gatewayCertificate);
        nodeB = AgentCertificate.loadOrCreate(
                dir.resolve("tls-b"), "node-b", List.of(InetAddress.getLoopbackAddress()), Clock.systemUTC());
        kube.serve(new NodeBuilder()
                .withNewMetadata()
                .withName("node-b")
                .withAnnotations(Map.of(AgentProtocol.CERTIFICATE_ANNOTATION, nodeB.fingerprint()))
                .endMetadata()
                .build());
        nodeBHttp = presenting(nodeB);
    }

    /** A client that presents {@code agent}'s certificate, as an agent claiming a disk does. */
    HttpClient presenting(AgentCertificate.Identity agent) throws Exception {
        return HttpClient.newBuilder()
                .sslContext(Pinning.to(identity.fingerprint(), agent.clientKeys()))
                .build();
    }

    /** A client that presents {@code certificate}, as the gateway does. */
    HttpClient gatewayClient(TestCa.Leaf certificate) throws Exception {
        return HttpClient.newBuilder()
                .sslContext(Pinning.to(identity.fingerprint(), certificate.keyManager()))
                .build();
    }

    @AfterEach
    void stop() {
        processes.forEach(FakeExecProcess::close);
        gatewayHttp.close();
        nodeBHttp.close();
        http.close();
        api.close();
        kube.close();
    }

    HttpResponse<String> get(String path, String token) throws Exception {
        return get(http, path, token);
    }

    HttpResponse<String> get(HttpClient http, String path, String token) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + api.port() + path))
                .timeout(Duration.ofSeconds(20)); // a follow that should have been refused would not end
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> post(HttpClient http, String path, String token, String onBehalfOf) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + api.port() + path))
                .POST(HttpRequest.BodyPublishers.noBody())
                .timeout(Duration.ofSeconds(20));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        if (onBehalfOf != null) {
            b.header(AgentProtocol.ON_BEHALF_OF, onBehalfOf);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /**
     * 2 000 connections that begin a TLS handshake and stall: the agent held every one (17 500 took it to 520 MB, past
     * its Pod's limit). Now the oldest make way for the newest, and a caller with a token is served at once.
     */
    @Test
    void aSlowlorisCannotStarveAuthorizedLogs() throws Exception {
        try (dev.drover.web.Slowloris attack = dev.drover.web.Slowloris.open(api.port(), 2000, Duration.ofSeconds(2))) {
            assertThat(attack.opened()).isEqualTo(2000);
            long start = System.nanoTime();
            HttpResponse<String> r = http.send(
                    HttpRequest.newBuilder(URI.create(
                                    "https://127.0.0.1:" + api.port() + "/v1/allocations/team-a/svc/logs/web"))
                            .header("Authorization", "Bearer alice-token")
                            .timeout(Duration.ofSeconds(2))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            assertThat(r.body()).isEqualTo("one\ntwo\nthree\n");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(2));
            // what the agent holds of them is bounded: the rest were closed
            await().atMost(Duration.ofSeconds(5))
                    .until(() -> attack.countClosedByServer() >= 2000 - AgentApi.CONNECTIONS.maxUntrusted());
        }
    }

    /**
     * The gateway's connection is known by its certificate from the handshake: a flood past the untrusted pool
     * before its first request closes the flood's connections, not the gateway's (it was closed as the oldest).
     */
    @Test
    void theGatewaysConnectionOutlivesAFloodBeforeItsFirstRequest() throws Exception {
        try (SSLSocket gateway = (SSLSocket) Pinning.to(identity.fingerprint(), gatewayCertificate.keyManager())
                .getSocketFactory()
                .createSocket(InetAddress.getLoopbackAddress(), api.port())) {
            gateway.setSoTimeout(10_000);
            gateway.startHandshake();
            // the client ends its handshake before the server has read its certificate: a flood sent at once
            // would meet a connection the server does not know yet
            await().atMost(Duration.ofSeconds(5)).until(() -> api.untrustedConnections() == 0);
            int flood = AgentApi.CONNECTIONS.maxUntrusted() + 20; // few: the head deadline (10 s) runs meanwhile
            try (dev.drover.web.Slowloris attack =
                    dev.drover.web.Slowloris.open(api.port(), flood, Duration.ofSeconds(2))) {
                await().atMost(Duration.ofSeconds(5)).until(() -> attack.countClosedByServer() >= 20);
                gateway.getOutputStream()
                        .write(("GET /v1/allocations/team-a/svc/logs/web HTTP/1.1\r\nHost: node-a\r\n"
                                        + "Authorization: Bearer gateway-token\r\n" + AgentProtocol.ON_BEHALF_OF
                                        + ": carol\r\nConnection: close\r\n\r\n")
                                .getBytes(StandardCharsets.US_ASCII));
                gateway.getOutputStream().flush();
                assertThat(read(gateway, "three\n")).startsWith("HTTP/1.1 200 ");
            }
        }
    }

    @Test
    void aCallerWithTheRightSignalsARunningTaskAndItsEventNamesThem() throws Exception {
        HttpResponse<String> r =
                post(http, "/v1/allocations/team-a/svc/signal?task=web&signal=usr1", "alice-token", null);

        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(r.body()).contains("\"signal\":\"SIGUSR1\"").contains("sent SIGUSR1 to task web");
        assertThat(signalled).containsExactly("web SIGUSR1 Signal SIGUSR1 sent by \"alice\"");
        assertThat(kube.asked).anySatisfy(review -> {
            assertThat(review.getSpec().getResourceAttributes().getVerb()).isEqualTo("create");
            assertThat(review.getSpec().getResourceAttributes().getSubresource())
                    .isEqualTo("signal");
        });
    }

    @Test
    void aSignalIsRefusedToReadersAndForBadTasksSignalsAndMethods() throws Exception {
        String web = "/v1/allocations/team-a/svc/signal?task=web&signal=SIGUSR1";
        HttpResponse<String> reader = post(http, web, "bob-token", null);
        assertThat(reader.statusCode()).isEqualTo(403);
        assertThat(reader.body()).contains("user \\\"bob\\\" cannot create allocations/signal");
        assertThat(post(http, "/v1/allocations/team-b/svc/signal?task=web&signal=HUP", "alice-token", null)
                        .statusCode())
                .isEqualTo(403);
        assertThat(get(web, "alice-token").statusCode())
                .as("a signal acts: GET is not it")
                .isEqualTo(405);
        assertThat(post(http, "/v1/allocations/team-a/svc/stats", "alice-token", null)
                        .statusCode())
                .isEqualTo(405);

        HttpResponse<String> unknown =
                post(http, "/v1/allocations/team-a/svc/signal?task=web&signal=SIGFOO%0A", "alice-token", null);
        assertThat(unknown.statusCode()).isEqualTo(400);
        assertThat(unknown.body())
                .contains("unknown signal \\\"SIGFOO\\\\u000a\\\"")
                .contains("SIGUSR1");
        assertThat(post(http, "/v1/allocations/team-a/svc/signal?signal=HUP", "alice-token", null)
                        .body())
                .contains("task=TASK");
        HttpResponse<String> noTask =
                post(http, "/v1/allocations/team-a/svc/signal?task=cache&signal=HUP", "alice-token", null);
        assertThat(noTask.statusCode()).isEqualTo(404);
        assertThat(noTask.body()).contains("has no task \\\"cache\\\" (its tasks: web, init, db)");
        HttpResponse<String> dead =
                post(http, "/v1/allocations/team-a/svc/signal?task=init&signal=HUP", "alice-token", null);
        assertThat(dead.statusCode()).isEqualTo(409);
        assertThat(dead.body())
                .contains("task init of allocation team-a/svc is not running (Dead): SIGHUP was not sent");
        HttpResponse<String> failed =
                post(http, "/v1/allocations/team-a/svc/signal?task=db&signal=HUP", "alice-token", null);
        assertThat(failed.statusCode()).isEqualTo(500);
        assertThat(failed.body()).contains("process 4242 is gone");
        assertThat(signalled).isEmpty();
    }

    @Test
    void aSignalTheGatewaySendsNamesItsUserAndNoOneElseCanNameOne() throws Exception {
        String web = "/v1/allocations/team-a/svc/signal?task=web&signal=TERM";
        assertThat(post(gatewayHttp, web, "gateway-token", "carol%40example.com%0Aforged")
                        .statusCode())
                .isEqualTo(200);
        assertThat(post(http, web, "alice-token", "mallory").statusCode()).isEqualTo(200);

        assertThat(signalled)
                .containsExactly(
                        "web SIGTERM Signal SIGTERM sent by \"carol@example.com\\u000aforged\"",
                        "web SIGTERM Signal SIGTERM sent by \"alice\"");
    }

    @Test
    void theGatewayMustNameTheUserOfASignalAndALongNameStillFits() throws Exception {
        String web = "/v1/allocations/team-a/svc/signal?task=web&signal=TERM";
        for (String bad : new String[] {null, "", "carol%zz", "x".repeat(AgentProtocol.MAX_ON_BEHALF_OF + 1)}) {
            HttpResponse<String> r = post(gatewayHttp, web, "gateway-token", bad);
            assertThat(r.statusCode()).as(String.valueOf(bad)).isEqualTo(400);
            assertThat(r.body()).contains(AgentProtocol.ON_BEHALF_OF);
        }
        assertThat(signalled).as("nothing is run as the gateway itself").isEmpty();
        String euros = "\u20ac".repeat(1024);
        assertThat(post(gatewayHttp, web, "gateway-token", AgentProtocol.encode(euros))
                        .statusCode())
                .isEqualTo(200);
        // the event quotes the name, cut: its start shows it was decoded, not the gateway's own
        assertThat(signalled)
                .singleElement()
                .asString()
                .startsWith("web SIGTERM Signal SIGTERM sent by \"\u20ac\u20ac");
    }

    ClientSocket exec(HttpClient http, String token, String onBehalfOf, String query, ExecTranscript transcript)
            throws Exception {
        Map<String, String> headers = new java.util.LinkedHashMap<>();
        headers.put("Authorization", "Bearer " + token);
        if (onBehalfOf != null) {
            headers.put(AgentProtocol.ON_BEHALF_OF, onBehalfOf);
        }
        return ClientSocket.open(
                http,
                URI.create("wss://127.0.0.1:" + api.port() + "/v1/allocations/team-a/svc/exec?" + query),
                headers,
                Channels.PROTOCOLS,
                transcript,
                Duration.ofSeconds(10));
    }

    @Test
    void execRunsCatWithItsInputRoundTrippedAndTheEventNamesTheUser() throws Exception {
        ExecTranscript t = new ExecTranscript();
        ClientSocket s = exec(http, "alice-token", null, "task=web&command=cat&stdin=true", t);
        assertThat(s.protocol()).isEqualTo(Channels.V5);
        assertThat(s.ping(Duration.ofSeconds(5)))
                .as("a ping is answered, as kubectl's heartbeat needs")
                .isTrue();
        s.send(ExecTranscript.stdin("hello\n"));
        s.send(Channels.close(Channels.STDIN));

        assertThat(t.channel(Channels.STDOUT)).isEqualTo("hello\n");
        assertThat(t.outcome().code()).isZero();
        assertThat(execs).containsExactly("Exec \"cat\" by \"alice\" [cat]");
        assertThat(kube.asked).anySatisfy(review -> {
            assertThat(review.getSpec().getResourceAttributes().getVerb()).isEqualTo("create");
            assertThat(review.getSpec().getResourceAttributes().getSubresource())
                    .isEqualTo("exec");
        });
        await().atMost(Duration.ofSeconds(5)).until(() -> api.execSessions() == 0);
    }

    @Test
    void execPassesTheExitCodeOnAndTheGatewaysUserIsNamed() throws Exception {
        ExecTranscript t = new ExecTranscript();
        exec(gatewayHttp, "gateway-token", "carol%40example.com", "task=web&command=sh&command=-c&command=exit+3", t);
        assertThat(t.channel(Channels.STDERR)).isEqualTo("bye\n");
        assertThat(t.outcome().code()).isEqualTo(3);
        assertThat(execs).containsExactly("Exec \"sh\" by \"carol@example.com\" [sh, -c, exit 3]");
    }

    @Test
    void execIsRefusedBeforeTheUpgradeToReadersAndForTasksNotRunning() throws Exception {
        assertThatThrownBy(() -> exec(http, "bob-token", null, "task=web&command=cat", new ExecTranscript()))
                .isInstanceOfSatisfying(ClientSocket.Refused.class, r -> {
                    assertThat(r.status()).isEqualTo(403);
                });
        assertThatThrownBy(() -> exec(http, "nobody", null, "task=web&command=cat", new ExecTranscript()))
                .isInstanceOfSatisfying(
                        ClientSocket.Refused.class, r -> assertThat(r.status()).isEqualTo(401));
        assertThatThrownBy(() -> exec(http, "gateway-token", null, "task=web&command=cat", new ExecTranscript()))
                .as("the gateway's token without its certificate")
                .isInstanceOfSatisfying(
                        ClientSocket.Refused.class, r -> assertThat(r.status()).isEqualTo(401));
        assertThatThrownBy(() -> exec(http, "alice-token", null, "task=init&command=cat", new ExecTranscript()))
                .isInstanceOfSatisfying(
                        ClientSocket.Refused.class, r -> assertThat(r.status()).isEqualTo(409));
        assertThatThrownBy(() -> exec(http, "alice-token", null, "task=web", new ExecTranscript()))
                .isInstanceOfSatisfying(
                        ClientSocket.Refused.class, r -> assertThat(r.status()).isEqualTo(400));
        HttpResponse<String> plain = get("/v1/allocations/team-a/svc/exec?task=web&command=cat", "alice-token");
        assertThat(plain.statusCode()).isEqualTo(400);
        assertThat(plain.body()).contains("WebSocket upgrade");
        assertThat(execs).isEmpty();
    }

    @Test
    void aClientThatGoesAwayKillsItsCommand() throws Exception {
        ExecTranscript t = new ExecTranscript();
        ClientSocket s = exec(http, "alice-token", null, "task=web&command=cat&stdin=true", t);
        s.send(ExecTranscript.stdin("a"));
        assertThat(t.messages.poll(10, java.util.concurrent.TimeUnit.SECONDS)).isNotNull();
        assertThat(api.execSessions()).isEqualTo(1);
        s.abort();
        await().atMost(Duration.ofSeconds(10)).until(() -> processes.getFirst().killed());
        await().atMost(Duration.ofSeconds(5)).until(() -> api.execSessions() == 0);
    }

    @Test
    void aCallerWithTheRightReadsATasksOutput() throws Exception {
        HttpResponse<String> all = get("/v1/allocations/team-a/svc/logs/web", "alice-token");
        assertThat(all.statusCode()).isEqualTo(200);
        assertThat(all.body()).isEqualTo("one\ntwo\nthree\n");
        assertThat(get("/v1/allocations/team-a/svc/logs/web?tail=1", "alice-token")
                        .body())
                .isEqualTo("three\n");
        assertThat(get("/v1/allocations/team-a/svc/logs/web?stream=stderr", "alice-token")
                        .body())
                .isEqualTo("oops\n");
    }

    @Test
    void callersWithoutATokenABadTokenOrTheRightAreRefused() throws Exception {
        HttpResponse<String> none = get("/v1/allocations/team-a/svc/logs/web", null);
        assertThat(none.statusCode()).isEqualTo(401);
        assertThat(none.body()).contains("no bearer token");
        HttpResponse<String> forged = get("/v1/allocations/team-a/svc/logs/web", "forged");
        assertThat(forged.statusCode()).isEqualTo(401);
        assertThat(forged.body()).contains("does not accept this token");
        HttpResponse<String> forbidden = get("/v1/allocations/team-b/svc/logs/web", "alice-token");
        assertThat(forbidden.statusCode()).isEqualTo(403);
        assertThat(forbidden.body()).contains("cannot get allocations/log in namespace \\\"team-b\\\"");
    }

    @Test
    void unknownAllocationsTasksAndBadInputAreClearErrors() throws Exception {
        assertThat(get("/v1/allocations/team-a/other/logs/web", "alice-token").body())
                .contains("allocation team-a/other does not run on node node-a");
        assertThat(get("/v1/allocations/team-a/svc/logs/cache", "alice-token").body())
                .contains("has no task \\\"cache\\\"");
        assertThat(get("/v1/allocations/team-a/svc/logs/web?tail=many", "alice-token")
                        .statusCode())
                .isEqualTo(400);
        assertThat(get("/v1/allocations/team-a/svc/logs/web?stream=../../etc/passwd", "alice-token")
                        .statusCode())
                .isEqualTo(400);
        assertThat(get("/v1/allocations/team-a/svc/logs/..%2F..%2Fx", "alice-token")
                        .statusCode())
                .isEqualTo(400);
        assertThat(get("/v1/nodes", "alice-token").statusCode()).isEqualTo(404);
    }

    /** Sends {@code target} as the request line's target, as a hostile client may, and reads the whole answer. */
    String raw(String target) throws Exception {
        try (javax.net.ssl.SSLSocket s = (javax.net.ssl.SSLSocket) Pinning.to(identity.fingerprint())
                .getSocketFactory()
                .createSocket(InetAddress.getLoopbackAddress(), api.port())) {
            s.setSoTimeout(10_000);
            s.getOutputStream()
                    .write(("GET " + target + " HTTP/1.1\r\nHost: node-a\r\nAuthorization: Bearer alice-token"
                                    + "\r\nConnection: close\r\n\r\n")
                            .getBytes(StandardCharsets.ISO_8859_1));
            s.getOutputStream().flush();
            return new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void malformedEscapesInThePathOrQueryAreA400() throws Exception {
        for (String target : List.of(
                "/v1/allocations/team-a/svc%zz/stats",
                "/v1/allocations/team-a/svc/logs/web%",
                "/v1/allocations/team-a/svc/logs/web?tail=%zz",
                "/v1/allocations/team-a/svc/logs/web?%=1")) {
            assertThat(raw(target, "alice-token")).as(target).startsWith("HTTP/1.1 400 ");
        }
        assertThat(raw("/v1/allocations/team-a/svc/logs/we%C3b", "alice-token"))
                .startsWith("HTTP/1.1 400 ")
                .contains("\\\"we%C3b\\\" does not decode to UTF-8 text");
        assertThat(raw("/v1/allocations/team-a/svc/logs/web?stream=%FF%FE", "alice-token"))
                .startsWith("HTTP/1.1 400 ")
                .contains("\\\"%FF%FE\\\" does not decode to UTF-8 text");
        assertThat(raw("/v1/allocations/team-a/svc/logs/web?tail=1+", "alice-token"))
                .as("+ is a space in a query")
                .contains("tail must be a whole number of lines, not \\\"1 \\\"");
        assertThat(get("/v1/allocations/team-a/svc/logs/web", "alice-token").statusCode())
                .as("the server carries on")
                .isEqualTo(200);
    }

    @Test
    void aFailureInsideTheAgentIsA500NotADroppedConnection() throws Exception {
        HttpResponse<String> r = get("/v1/allocations/team-a/broken/stats", "alice-token");
        assertThat(r.statusCode()).isEqualTo(500);
        assertThat(r.body())
                .contains("the agent failed to answer: java.lang.IllegalStateException: the runner of"
                        + " team-a/broken is in a state nobody foresaw");
    }

    @Test
    void aClientThatHangsUpMidFollowFreesItsPlaceWithinSeconds() throws Exception {
        try (SSLSocket quiet = follow("alice-token")) {
            assertThat(read(quiet, "three\n")).startsWith("HTTP/1.1 200 ");
            assertThat(api.followers()).isEqualTo(1);
        } // the task writes nothing more: only the hang-up can end this follow
        await().atMost(Duration.ofSeconds(10)).until(() -> api.followers() == 0);
    }

    @Test
    void followsTheGatewayAsksForOthersCountAgainstThoseUsers() throws Exception {
        try (SSLSocket c1 = follow("gateway-token", "carol%40example.com", gatewayCertificate);
                SSLSocket c2 = follow("gateway-token", "carol%40example.com", gatewayCertificate);
                SSLSocket d1 = follow("gateway-token", "dave", gatewayCertificate)) {
            for (SSLSocket s : List.of(c1, c2, d1)) {
                assertThat(read(s, "three\n"))
                        .as("one caller, three users: the per-caller bound (2) is theirs")
                        .startsWith("HTTP/1.1 200 ");
            }
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> api.followers() == 0);
        try (SSLSocket c1 = follow("gateway-token", "carol%40example.com", gatewayCertificate);
                SSLSocket c2 = follow("gateway-token", "carol%40example.com", gatewayCertificate);
                SSLSocket c3 = follow("gateway-token", "carol%40example.com", gatewayCertificate)) {
            // the three are taken in whatever order the agent reads them, not the order they connected
            List<String> answers = new ArrayList<>();
            for (SSLSocket s : List.of(c1, c2, c3)) {
                answers.add(readFollowOrRefusal(s));
            }
            assertThat(answers).filteredOn(a -> a.startsWith("HTTP/1.1 200 ")).hasSize(2);
            assertThat(answers)
                    .filteredOn(a -> a.startsWith("HTTP/1.1 429 "))
                    .singleElement()
                    .asString()
                    .contains("user \\\"carol@example.com\\\" already has 2 followed logs");
        }
    }

    @Test
    void aUserNamedByAnyoneButTheGatewayIsIgnored() throws Exception {
        try (SSLSocket a1 = follow("alice-token", "carol");
                SSLSocket a2 = follow("alice-token", "dave")) {
            read(a1, "three\n");
            read(a2, "three\n");
            try (SSLSocket a3 = follow("alice-token", "erin")) {
                assertThat(read(a3, "}"))
                        .as("alice's follows count against alice, whatever user she names")
                        .startsWith("HTTP/1.1 429 ")
                        .contains("user \\\"alice\\\" already has 2 followed logs");
            }
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> api.followers() == 0);
        try (SSLSocket g1 = follow("gateway-token", "carol")) {
            assertThat(read(g1, "}"))
                    .as("the gateway's token without its certificate names no one")
                    .startsWith("HTTP/1.1 401 ");
        }
    }

    @Test
    void theGatewaysTokenIsTakenOnlyWithItsClientCertificate() throws Exception {
        String stats = "/v1/allocations/team-a/svc/stats";
        HttpResponse<String> replayed = get(stats, "gateway-token");
        assertThat(replayed.statusCode())
                .as("a node replaying the token it received")
                .isEqualTo(401);
        assertThat(replayed.body())
                .contains("the Drover gateway's (" + ReviewingApiServer.GATEWAY + ")")
                .contains("presented none");
        TestCa other = new TestCa("drover-gateway-ca");
        try (HttpClient forged = gatewayClient(other.sign("drover-gateway", KeyPurposeId.id_kp_clientAuth))) {
            HttpResponse<String> r = get(forged, stats, "gateway-token");
            assertThat(r.statusCode())
                    .as("a certificate of another CA of the same name")
                    .isEqualTo(401);
            assertThat(r.body()).contains("not signed by the gateway CA in " + dir.resolve("gateway-ca.crt"));
        }
        try (HttpClient serverOnly = gatewayClient(gatewayCa.sign("drover-gateway", KeyPurposeId.id_kp_serverAuth))) {
            HttpResponse<String> r = get(serverOnly, stats, "gateway-token");
            assertThat(r.statusCode()).isEqualTo(401);
            assertThat(r.body()).contains("not for client authentication");
        }
        assertThat(get(gatewayHttp, stats, "gateway-token").statusCode()).isEqualTo(200);
        assertThat(get(gatewayHttp, stats, "alice-token").statusCode())
                .as("a client certificate makes no one else the gateway, and others need none")
                .isEqualTo(200);
    }

    @Test
    void aNewGatewayCaIsTakenWhenItsFileChanges() throws Exception {
        String stats = "/v1/allocations/team-a/svc/stats";
        assertThat(get(gatewayHttp, stats, "gateway-token").statusCode()).isEqualTo(200);
        TestCa upgraded = new TestCa("drover-gateway-ca");
        upgraded.writePem(dir.resolve("gateway-ca.crt")); // helm upgrade: a new CA, the ConfigMap updated in place
        assertThat(get(gatewayHttp, stats, "gateway-token").statusCode())
                .as("the old CA's certificate")
                .isEqualTo(401);
        try (HttpClient restarted = gatewayClient(upgraded.sign("drover-gateway", KeyPurposeId.id_kp_clientAuth))) {
            assertThat(get(restarted, stats, "gateway-token").statusCode()).isEqualTo(200);
        }
        Files.delete(dir.resolve("gateway-ca.crt"));
        HttpResponse<String> none = get(gatewayHttp, stats, "gateway-token");
        assertThat(none.statusCode()).isEqualTo(401);
        assertThat(none.body()).contains("cannot read the gateway CA");
    }

    @Test
    @SuppressWarnings("try") // a1 is closed early on purpose: its place is freed for c2
    void followersBeyondTheLimitsPerCallerAndInTotalGet429() throws Exception {
        try (SSLSocket a1 = follow("alice-token");
                SSLSocket a2 = follow("alice-token");
                SSLSocket c1 = followIn("team-b", "carol-token");
                SSLSocket c2 = followIn("team-b", "carol-token")) {
            for (SSLSocket s : List.of(a1, a2, c1, c2)) {
                assertThat(read(s, "three\n")).startsWith("HTTP/1.1 200 ");
            }
            try (SSLSocket third = follow("alice-token");
                    SSLSocket full = follow("bob-token")) {
                assertThat(read(third, "}"))
                        .startsWith("HTTP/1.1 429 ")
                        .containsIgnoringCase("Retry-After: 10\r\n")
                        .contains("user \\\"alice\\\" already has 2 followed logs on this agent")
                        .contains("(api.maxFollowersPerCaller)");
                assertThat(read(full, "}"))
                        .startsWith("HTTP/1.1 429 ")
                        .contains("this agent already serves 4 followed logs")
                        .contains("(api.maxFollowers)");
            }
            assertThat(get("/v1/allocations/team-a/svc/logs/web?tail=1", "bob-token")
                            .body())
                    .as("reading without follow is not bounded")
                    .isEqualTo("three\n");
            a1.close();
            await().atMost(Duration.ofSeconds(10)).until(() -> api.followers() == 3);
            try (SSLSocket b1 = follow("bob-token")) {
                assertThat(read(b1, "three\n")).as("a freed place is taken").startsWith("HTTP/1.1 200 ");
            }
        }
    }

    @Test
    void theCallersOfOneNamespaceCannotTakeEveryFollowPlace() throws Exception {
        // One after another: sent together, whichever the agent took last would be the one refused.
        List<SSLSocket> open = new ArrayList<>();
        try {
            for (String token : List.of("alice-token", "alice-token", "bob-token")) {
                open.add(follow(token));
                assertThat(read(open.getLast(), "three\n")).startsWith("HTTP/1.1 200 ");
            }
            open.add(follow("bob-token"));
            assertThat(read(open.getLast(), "}"))
                    .as("bob has one follow of two and the agent serves three of four, but team-a has three")
                    .startsWith("HTTP/1.1 429 ")
                    .containsIgnoringCase("Retry-After: 10\r\n")
                    .contains("namespace \\\"team-a\\\" already has 3 followed logs on this agent")
                    .contains("(api.maxFollowersPerNamespace)");
            try (SSLSocket c1 = followIn("team-b", "carol-token")) {
                assertThat(read(c1, "three\n"))
                        .as("another namespace still gets a place")
                        .startsWith("HTTP/1.1 200 ");
            }
        } finally {
            for (SSLSocket s : open) {
                s.close();
            }
        }
    }

    @Test
    void theExecSessionsOfOneNamespaceAreBoundedWhoeverTheUsers() throws Exception {
        List<ClientSocket> open = new ArrayList<>();
        try {
            for (String user : List.of("u1", "u2", "u3", "u4")) {
                open.add(exec(
                        gatewayHttp, "gateway-token", user, "task=web&command=cat&stdin=true", new ExecTranscript()));
            }
            fail("u4's session was let in beside three others in team-a");
        } catch (ClientSocket.Refused r) {
            assertThat(open).as("u1 to u3 each had a place").hasSize(3);
            assertThat(r.status()).isEqualTo(429);
            assertThat(r.body())
                    .contains("namespace \\\"team-a\\\" already has 3 exec sessions on this agent")
                    .contains("(api.maxFollowersPerNamespace)");
        } finally {
            open.forEach(ClientSocket::abort); // the test's HTTP client cannot close while one is open
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> api.execSessions() == 0);
    }

    @Test
    void randomBadTokensFromOneSourceCostABoundedNumberOfTokenReviews() throws Exception {
        long begin = System.nanoTime();
        int requests = 100;
        int limited = 0;
        for (int i = 0; i < requests; i++) {
            HttpResponse<String> r = get("/v1/allocations/team-a/svc/stats", "random-" + UUID.randomUUID());
            assertThat(r.statusCode()).isIn(401, 429);
            if (r.statusCode() == 429) {
                limited++;
                assertThat(r.headers().firstValue("Retry-After")).isPresent();
            }
        }
        double seconds = (System.nanoTime() - begin) / 1e9;
        assertThat(kube.tokenReviews.get())
                .as("the burst and the rate over %.1f s", seconds)
                .isLessThanOrEqualTo(LIMITS.reviewBurst() + (int) Math.ceil(seconds * LIMITS.reviewsPerSecond()));
        assertThat(limited).isPositive();
    }

    /** Opens {@code follow=true} of task web's output (from its last line) with {@code token}, by hand. */
    SSLSocket follow(String token) throws Exception {
        return follow(token, null);
    }

    /** A follow by {@code token}'s holder on behalf of {@code user} (null: none named), as the gateway asks. */
    SSLSocket follow(String token, String user) throws Exception {
        return follow(token, user, null);
    }

    /** As {@link #follow(String, String)}, presenting {@code certificate} (null: none). */
    SSLSocket follow(String token, String user, TestCa.Leaf certificate) throws Exception {
        return follow("team-a", token, user, certificate);
    }

    /** A follow of allocation {@code namespace}/svc by {@code token}'s holder. */
    SSLSocket followIn(String namespace, String token) throws Exception {
        return follow(namespace, token, null, null);
    }

    SSLSocket follow(String namespace, String token, String user, TestCa.Leaf certificate) throws Exception {
        SSLSocket s =
                (SSLSocket) Pinning.to(identity.fingerprint(), certificate == null ? null : certificate.keyManager())
                        .getSocketFactory()
                        .createSocket(InetAddress.getLoopbackAddress(), api.port());
        s.setSoTimeout(10_000);
        s.getOutputStream()
                .write(("GET /v1/allocations/" + namespace + "/svc/logs/web?tail=1&follow=true HTTP/1.1\r\n"
                                + "Host: node-a\r\nAuthorization: Bearer " + token + "\r\n"
                                + (user == null ? "" : AgentProtocol.ON_BEHALF_OF + ": " + user + "\r\n") + "\r\n")
                        .getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().flush();
        return s;
    }

    /** Reads a follow's answer: its first line of output, or the whole of a refusal (which keeps the connection). */
    static String readFollowOrRefusal(SSLSocket s) throws IOException {
        StringBuilder got = new StringBuilder();
        InputStream in = s.getInputStream();
        while (!got.toString().endsWith("three\n")
                && !(got.toString().startsWith("HTTP/1.1 4") && got.toString().endsWith("}"))) {
            int b = in.read();
            if (b < 0) {
                break;
            }
            got.append((char) b);
        }
        return got.toString();
    }

    /** Reads from {@code s} until what came ends with {@code end}; returns all of it. */
    static String read(SSLSocket s, String end) throws IOException {
        StringBuilder got = new StringBuilder();
        InputStream in = s.getInputStream();
        while (!got.toString().endsWith(end)) {
            int b = in.read();
            if (b < 0) {
                break;
            }
            got.append((char) b);
        }
        return got.toString();
    }

    /** Sends {@code target} as the request line's target, as a hostile client may, and reads the whole answer. */
    String raw(String target, String token) throws Exception {
        try (SSLSocket s = (SSLSocket) Pinning.to(identity.fingerprint())
                .getSocketFactory()
                .createSocket(InetAddress.getLoopbackAddress(), api.port())) {
            s.setSoTimeout(10_000);
            s.getOutputStream()
                    .write(("GET " + target + " HTTP/1.1\r\nHost: node-a\r\nAuthorization: Bearer " + token
                                    + "\r\nConnection: close\r\n\r\n")
                            .getBytes(StandardCharsets.ISO_8859_1));
            s.getOutputStream().flush();
            return new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void aFollowedLogStreamsNewOutputUntilTheTaskIsDead() throws Exception {
        HttpResponse<InputStream> r = http.send(
                HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + api.port()
                                + "/v1/allocations/team-a/svc/logs/web?tail=1&follow=true"))
                        .header("Authorization", "Bearer alice-token")
                        .build(),
                HttpResponse.BodyHandlers.ofInputStream());
        try (InputStream body = r.body()) {
            assertThat(new String(body.readNBytes(6), StandardCharsets.UTF_8)).isEqualTo("three\n");
            Files.writeString(dir.resolve("logs/web.stdout.0"), "four\n", StandardOpenOption.APPEND);
            assertThat(new String(body.readNBytes(5), StandardCharsets.UTF_8)).isEqualTo("four\n");
            webDead.set(true);
            assertThat(body.readAllBytes())
                    .as("the stream ends once the task is dead")
                    .isEmpty();
        }
    }

    @Test
    void statsShowEachTasksCpuAndMemoryAndItsDevices() throws Exception {
        HttpResponse<String> r = get("/v1/allocations/team-a/svc/stats", "alice-token");
        assertThat(r.statusCode()).isEqualTo(200);
        JsonNode stats = new ObjectMapper().readTree(r.body());
        assertThat(stats.path("allocation").asText()).isEqualTo("team-a/svc");
        JsonNode web = stats.path("tasks").path("web");
        assertThat(web.path("state").asText()).isEqualTo("Running");
        assertThat(web.path("resourceUsage").path("cpu").path("percent").asDouble())
                .as("half a core")
                .isBetween(45.0, 55.0);
        assertThat(web.path("resourceUsage").path("memory").path("rssBytes").asLong())
                .isEqualTo(64L << 20);
        assertThat(web.path("devices").get(0).path("id").asText()).isEqualTo("GPU-0");
        assertThat(web.path("devices").get(0).path("gpuUtilPercent").asDouble()).isEqualTo(87);
        assertThat(web.path("devices").get(0).has("powerW"))
                .as("what the device cannot report is left out")
                .isFalse();
        assertThat(stats.path("tasks").path("init").path("state").asText()).isEqualTo("Dead");
        assertThat(stats.path("tasks").path("init").has("resourceUsage")).isFalse();
        assertThat(stats.path("tasks").path("db").path("error").asText()).isEqualTo("process 4242 is gone");
        assertThat(stats.path("resourceUsage").path("memory").path("rssBytes").asLong())
                .isEqualTo(64L << 20);
        assertThat(stats.path("devices").get(0).path("model").asText()).isEqualTo("Tesla T4");
        assertThat(stats.path("devices").get(0).path("memoryTotalMiB").asLong()).isEqualTo(16384);
        assertThat(kube.asked)
                .extracting(a -> a.getSpec().getResourceAttributes().getSubresource())
                .contains("stats");
        assertThat(get("/v1/allocations/team-b/svc/stats", "alice-token").statusCode())
                .isEqualTo(403);
    }

    @Test
    void aSnapshotIsTheEphemeralDiskAsTar() throws Exception {
        HttpResponse<InputStream> r = gatewayHttp.send(
                HttpRequest.newBuilder(
                                URI.create("https://127.0.0.1:" + api.port() + "/v1/allocations/team-a/svc/snapshot"))
                        .header("Authorization", "Bearer gateway-token")
                        .build(),
                HttpResponse.BodyHandlers.ofInputStream());
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("Content-Type")).contains("application/x-tar");
        Path staging = Files.createDirectories(dir.resolve("staging"));
        try (InputStream body = r.body()) {
            Snapshots.unpack(body, staging, Set.of("web"), 1 << 20);
        }
        assertThat(staging.resolve("alloc/data/state.txt")).hasContent("kept");
        assertThat(staging.resolve("web/local/cache.bin")).hasContent("warm");
        assertThat(kube.asked)
                .extracting(a -> a.getSpec().getResourceAttributes().getSubresource())
                .contains("snapshot");
        assertThat(get("/v1/allocations/team-a/svc/snapshot", null).statusCode())
                .isEqualTo(401);
        assertThat(get("/v1/allocations/team-b/svc/snapshot", "alice-token").body())
                .contains("cannot get allocations/snapshot");
    }

    @Test
    void onlyTheGatewayDownloadsADiskWithoutClaimingIt() throws Exception {
        String plain = "/v1/allocations/team-a/svc/snapshot";
        HttpResponse<String> agent = get(plain, "node-b-token");
        assertThat(agent.statusCode())
                .as("an agent's right to allocations/snapshot is for migrations to its node")
                .isEqualTo(403);
        assertThat(agent.body())
                .contains("only the Drover gateway downloads a disk as it is")
                .contains("?successor=NAME&uid=UID");
        assertThat(get(gatewayHttp, plain, "node-b-token").statusCode())
                .as("nor with a certificate of the gateway's CA")
                .isEqualTo(403);
        assertThat(get(plain, "alice-token").statusCode())
                .as("users download through the gateway")
                .isEqualTo(403);
        assertThat(get(gatewayHttp, plain, "gateway-token").statusCode()).isEqualTo(200);
        assertThat(dir.resolve("alloc/.disk-claim")).doesNotExist();
    }

    static Allocation successor(String name, String uid, String previous, String node) {
        Allocation a = new Allocation();
        a.setMetadata(new ObjectMetaBuilder()
                .withNamespace("team-a")
                .withName(name)
                .withUid(uid)
                .build());
        AllocationSpec spec = new AllocationSpec();
        spec.setPreviousAllocation(previous);
        spec.setNodeName(node);
        a.setSpec(spec);
        return a;
    }

    @Test
    void theAgentOfTheSuccessorsNodeClaimsTheDiskForItOnceAndForAll() throws Exception {
        kube.serve(successor("svc-2", "uid-2", "svc", "node-b"));
        kube.serve(successor("svc-3", "uid-3", "svc", "node-b"));
        HttpResponse<String> first =
                get(nodeBHttp, "/v1/allocations/team-a/svc/snapshot?successor=svc-2&uid=uid-2", "node-b-token");
        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(dir.resolve("alloc/.disk-claim")).hasContent("svc-2/uid-2");
        assertThat(get(nodeBHttp, "/v1/allocations/team-a/svc/snapshot?successor=svc-2&uid=uid-2", "node-b-token")
                        .statusCode())
                .as("the same successor again, as after its agent restarted")
                .isEqualTo(200);

        HttpResponse<String> second =
                get(nodeBHttp, "/v1/allocations/team-a/svc/snapshot?successor=svc-3&uid=uid-3", "node-b-token");
        assertThat(second.statusCode()).isEqualTo(409);
        assertThat(new ObjectMapper().readTree(second.body()).path("message").asText())
                .isEqualTo("allocation svc-2 claimed the disk of alloc first, and a disk goes to one successor only");
    }

    /**
     * The token alone was enough: the agent a node's token was shown to (the previous node's, when that node's agent
     * migrated a disk from it) could replay it, within its hour, to take disks bound for that node from a third
     * node's agent, in any namespace. The claim now needs the certificate the token's node publishes, too.
     */
    @Test
    void aClaimWithANodesTokenMustPresentTheCertificateThatNodePublishes() throws Exception {
        kube.serve(successor("svc-2", "uid-2", "svc", "node-b"));
        String claim = "/v1/allocations/team-a/svc/snapshot?successor=svc-2&uid=uid-2";

        HttpResponse<String> bare = get(claim, "node-b-token");
        assertThat(bare.statusCode()).isEqualTo(403);
        assertThat(bare.body())
                .contains("presents the certificate the agent of node \\\"node-b\\\" publishes on its Node")
                .contains("this connection presented none");

        AgentCertificate.Identity replayer = AgentCertificate.loadOrCreate(
                dir.resolve("tls-c"), "node-c", List.of(InetAddress.getLoopbackAddress()), Clock.systemUTC());
        try (HttpClient other = presenting(replayer)) {
            HttpResponse<String> replayed = get(other, claim, "node-b-token");
            assertThat(replayed.statusCode()).isEqualTo(403);
            assertThat(replayed.body()).contains("this one is another");
        }
        assertThat(dir.resolve("alloc/.disk-claim")).as("nothing was claimed").doesNotExist();

        assertThat(get(nodeBHttp, claim, "node-b-token").statusCode()).isEqualTo(200);
        assertThat(dir.resolve("alloc/.disk-claim")).hasContent("svc-2/uid-2");
    }

    @Test
    void noOneButTheAgentOfTheSuccessorsNodeCanClaimADisk() throws Exception {
        kube.serve(successor("svc-2", "uid-2", "svc", "node-b"));
        kube.serve(successor("elsewhere", "uid-e", "svc", "node-c"));
        kube.serve(successor("unrelated", "uid-u", "other", "node-b"));
        String claim = "/v1/allocations/team-a/svc/snapshot?successor=";

        HttpResponse<String> user = get(claim + "svc-2&uid=uid-2", "alice-token");
        assertThat(user.statusCode()).isEqualTo(403);
        assertThat(user.body()).contains("only an agent can take a disk for a successor");

        HttpResponse<String> otherUid = get(nodeBHttp, claim + "svc-2&uid=uid-2b", "node-b-token");
        assertThat(otherUid.statusCode()).isEqualTo(403);
        assertThat(otherUid.body()).contains("team-a/svc-2 (uid uid-2b) does not exist");

        HttpResponse<String> otherNode = get(nodeBHttp, claim + "elsewhere&uid=uid-e", "node-b-token");
        assertThat(otherNode.statusCode()).isEqualTo(403);
        assertThat(otherNode.body()).contains("is bound to node \\\"node-c\\\", not to node \\\"node-b\\\"");

        HttpResponse<String> notReplacing = get(nodeBHttp, claim + "unrelated&uid=uid-u", "node-b-token");
        assertThat(notReplacing.statusCode()).isEqualTo(403);
        assertThat(notReplacing.body()).contains("does not replace svc");

        assertThat(get(nodeBHttp, claim + "never-was&uid=uid-n", "node-b-token").statusCode())
                .isEqualTo(403);
        assertThat(get(nodeBHttp, claim + "svc-2", "node-b-token").statusCode())
                .as("no uid")
                .isEqualTo(400);
        assertThat(get(nodeBHttp, claim + "svc-2&uid=a/b", "node-b-token").statusCode())
                .isEqualTo(400);
        assertThat(dir.resolve("alloc/.disk-claim")).as("nothing was claimed").doesNotExist();
    }

    @Test
    void theClientExplainsAForeignCertificateAMissingTokenAndAnUnknownAllocation() throws Exception {
        URI base = URI.create("https://127.0.0.1:" + api.port());
        AgentClient.Endpoint impostor = new AgentClient.Endpoint("node-a", base, "ab".repeat(32));
        assertThatThrownBy(() -> AgentClient.get(
                        impostor,
                        AgentProtocol.agentPath("team-a", "svc", "stats"),
                        "alice-token",
                        Duration.ofSeconds(10),
                        InputStream::readAllBytes))
                .isInstanceOf(AgentClient.AgentException.class)
                .hasMessageContaining("is not the one node node-a names")
                .hasMessageContaining("not the " + "ab".repeat(32) + " published on its Node");
        AgentClient.Endpoint real = new AgentClient.Endpoint("node-a", base, identity.fingerprint());
        assertThatThrownBy(() -> AgentClient.get(
                        real,
                        AgentProtocol.agentPath("team-a", "svc", "stats"),
                        "forged",
                        Duration.ofSeconds(10),
                        InputStream::readAllBytes))
                .isInstanceOf(AgentClient.AgentException.class)
                .hasMessageContaining("(HTTP 401)")
                .hasMessageNotContaining("{");
        assertThatThrownBy(() -> AgentClient.get(
                        real,
                        AgentProtocol.agentPath("team-a", "gone", "stats"),
                        "alice-token",
                        Duration.ofSeconds(10),
                        InputStream::readAllBytes))
                .hasMessage("allocation team-a/gone does not run on node node-a (HTTP 404)");
        String body = AgentClient.get(
                real,
                AgentProtocol.agentPath("team-a", "svc", "logs/web") + "?tail=1",
                "alice-token",
                Duration.ofSeconds(10),
                in -> new String(in.readAllBytes(), StandardCharsets.UTF_8));
        assertThat(body).isEqualTo("three\n");
    }

    @Test
    void aClientPinningAnotherFingerprintDoesNotConnect() throws Exception {
        try (HttpClient wrong =
                HttpClient.newBuilder().sslContext(Pinning.to("00".repeat(32))).build()) {
            assertThatThrownBy(() -> wrong.send(
                            HttpRequest.newBuilder(URI.create(
                                            "https://127.0.0.1:" + api.port() + "/v1/allocations/team-a/svc/logs/web"))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString()))
                    .isInstanceOf(SSLHandshakeException.class);
        }
    }
}
