package dev.drover.execstream;

import dev.drover.httpapi.AgentCertificate;
import dev.drover.httpapi.Pinning;
import dev.drover.web.ClientSocket;
import dev.drover.web.JettyHttps;
import dev.drover.web.MessageReceiver;
import dev.drover.web.MessageSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.eclipse.jetty.websocket.core.server.WebSocketNegotiator;

/**
 * An agent's exec endpoint for tests of the hops in front of it: runs {@code cat} for command {@code cat}, and exits
 * with the number the last word ends with for any other; a query naming task {@code db} is refused with a 409.
 */
public final class FakeExecAgent implements AutoCloseable {

    /** "PATH?QUERY by USER": what was opened, in order. */
    public final List<String> opened = new CopyOnWriteArrayList<>();

    public final List<FakeExecProcess> processes = new CopyOnWriteArrayList<>();
    /** The Authorization header of each upgrade asked for. */
    public final List<String> authorizations = new CopyOnWriteArrayList<>();

    private final AgentCertificate.Identity identity;
    private final JettyHttps server;

    public FakeExecAgent(Path dir) throws Exception {
        identity = AgentCertificate.loadOrCreate(
                dir.resolve("fake-agent-tls"), "node-1", List.of(InetAddress.getLoopbackAddress()), Clock.systemUTC());
        WebSocketNegotiator negotiator = (request, response, callback) -> {
            String query = request.getHttpURI().getQuery();
            String authorization = request.getHeaders().get("Authorization");
            authorizations.add(String.valueOf(authorization));
            if ("Bearer stranger".equals(authorization)) {
                response.setStatus(403);
                response.write(
                        true,
                        ByteBuffer.wrap(
                                ("{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"allocations.agent.drover.dev"
                                                + " \\\"web\\\" is forbidden: User \\\"stranger\\\" cannot get resource"
                                                + " \\\"allocations/exec\\\"\",\"reason\":\"Forbidden\",\"code\":403}")
                                        .getBytes(StandardCharsets.UTF_8)),
                        callback);
                return null;
            }
            opened.add(request.getHttpURI().getPath() + "?" + query + " by "
                    + request.getHeaders().get("X-Drover-On-Behalf-Of"));
            if (query.contains("task=db")) {
                response.setStatus(409);
                response.write(
                        true,
                        ByteBuffer.wrap("{\"status\":409,\"message\":\"task db is not running (Dead)\"}"
                                .getBytes(StandardCharsets.UTF_8)),
                        callback);
                return null;
            }
            FakeExecProcess p = query.contains("command=cat")
                    ? FakeExecProcess.cat()
                    : FakeExecProcess.failing("bye\n", exitCode(query));
            processes.add(p);
            String protocol = request.getSubProtocols().contains(Channels.V5) ? Channels.V5 : Channels.V4;
            response.setAcceptedSubProtocol(protocol);
            ExecSession.Streams streams =
                    new ExecSession.Streams(query.contains("stdin=true"), true, true, protocol.equals(Channels.V5));
            return new MessageSocket(new MessageReceiver() {
                ExecSession session;

                @Override
                public synchronized void opened(ExecSession.Peer peer) {
                    session = new ExecSession(p, streams, peer);
                    session.start();
                }

                @Override
                public void message(ByteBuffer message, Runnable done) {
                    session.receive(message, done);
                }

                @Override
                public void closed(String why) {
                    Thread.ofVirtual().start(session::close);
                }
            });
        };
        server = JettyHttps.start(
                "fake-agent",
                new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                16,
                identity.sslContext(),
                false,
                ex -> ex.send(404, "text/plain", new byte[0]),
                List.of(new JettyHttps.Upgrade(".*/exec$", negotiator)));
    }

    /** Opens {@code pathAndQuery} on this agent as a gateway would. */
    public ClientSocket open(String pathAndQuery, String user, List<String> protocols, MessageReceiver receiver)
            throws Exception {
        HttpClient http = HttpClient.newBuilder()
                .sslContext(Pinning.to(identity.fingerprint()))
                .connectTimeout(Duration.ofSeconds(5))
                .build();
        return ClientSocket.openOwning(
                http,
                URI.create("wss://127.0.0.1:" + server.port() + pathAndQuery),
                Map.of("X-Drover-On-Behalf-Of", user),
                protocols,
                receiver,
                Duration.ofSeconds(10));
    }

    /** The number the command's last word ends with. */
    static int exitCode(String query) {
        String last = "";
        for (String pair : query.split("&")) {
            if (pair.startsWith("command=")) {
                last = pair;
            }
        }
        return Integer.parseInt(last.replaceAll(".*\\D", ""));
    }

    public int port() {
        return server.port();
    }

    /** The agent's certificate, PEM, which a client that does not pin it trusts. */
    public String certificatePem() throws Exception {
        return "-----BEGIN CERTIFICATE-----\n"
                + java.util.Base64.getMimeEncoder(64, new byte[] {'\n'})
                        .encodeToString(identity.certificate().getEncoded())
                + "\n-----END CERTIFICATE-----\n";
    }

    @Override
    public void close() {
        processes.forEach(FakeExecProcess::close);
        server.close();
    }
}
